"""`tlm`: the command line over tlm_core. Every command prints a table, or one JSON document with --json.

Above the pipeline: each command runs some of its steps (inspect, space, generate, measure, compile, compare ...).

Errors are one line on stderr and a non-zero exit; progress goes to stderr. Each module in COMMANDS adds
its subcommands through `register(sub, add)`.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable

from tlm_core.errors import first_line

EXIT_ERROR = 2
COMMANDS = ["core", "tlm", "dataset", "baselines", "compare"]  # modules of tlm_core.cli, in listing order


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help, but the epilog of `with_example` keeps its lines (a command line is not re-wrapped)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith(EXAMPLE):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


EXAMPLE = "example:"


def with_example(command: str) -> dict:
    """add_parser's keywords for a --help that ends with one example command line."""
    return {"epilog": f"{EXAMPLE}\n  {command}", "formatter_class": HelpFormatter}


def _add(sub: argparse._SubParsersAction, name: str, fn: Callable, help: str, model: bool = True, example: str = ""):
    """A subcommand with the options every command shares; `example`: the command line its --help ends with."""
    sp = sub.add_parser(name, help=help, description=help, **(with_example(example) if example else {}))
    if model:
        sp.add_argument("model", help="sample name (see `tlm models`) or a .pt2 / .onnx / TVMScript file")
        sp.add_argument("--target", default="llvm", choices=["llvm", "cuda", "auto"])
        sp.add_argument(
            "--input-shape", action="append", default=[], metavar="NAME=DIMS",
            help="the shape of an input with dynamic dimensions, e.g. input_ids=1x128 (repeat per input)",
        )
    sp.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    sp.add_argument("--quiet", action="store_true", help="no progress on stderr")
    sp.set_defaults(fn=fn)
    return sp


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tlm",
        description="Tensor Language Model compiler for deep-learning kernels",
        **with_example("tlm inspect bert-tiny   # then `tlm COMMAND --help`: each command's options and example"),
    )
    sub = p.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        importlib.import_module(f"tlm_core.cli.{name}").register(sub, _add)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        args.fn(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as err:  # one clear line, not a traceback; TLM_DEBUG=1 shows the traceback
        if os.environ.get("TLM_DEBUG"):
            raise
        msg = first_line(err)
        print(f"tlm {args.command}: error: {msg}", file=sys.stderr)
        return EXIT_ERROR
    return 0


if __name__ == "__main__":
    sys.exit(main())
