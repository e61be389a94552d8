"""The hardware part of the prompt: target kind, CPU (or GPU arch), cores, vector width, cache sizes."""

from __future__ import annotations

from collections.abc import Sequence

from tvm.target import Target

from ..target import caches_kib, kib_text, vector_bits
from .numbers import is_number_token, number_tokens, read_number

# LLVM CPU names and CUDA archs with their own token; any other is written "cpu?" / "arch?" (the numbers that
# follow still describe it).
CPUS = [
    "generic", "x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4", "haswell", "broadwell", "skylake",
    "skylake-avx512", "cascadelake", "cooperlake", "icelake-client", "icelake-server", "tigerlake",
    "alderlake", "raptorlake", "sapphirerapids", "emeraldrapids", "graniterapids", "znver1", "znver2",
    "znver3", "znver4", "znver5", "apple-m1", "apple-m2", "apple-m3", "neoverse-n1", "neoverse-n2",
    "neoverse-v1", "neoverse-v2", "cortex-a72", "cortex-a76",
]  # fmt: skip
ARCHS = [f"sm_{v}" for v in (50, 52, 60, 61, 70, 72, 75, 80, 86, 87, 89, 90, 100, 120)]
KINDS = ["llvm", "cuda"]
HW_WORDS = ["<hw>", "kind", "cpu", "cpu?", "arch", "arch?", "cores", "vec", "l1d", "l2", "l3", "threads", "smem",
            "warp", "kind?"]  # fmt: skip


def hardware_vocab() -> list[str]:
    return [*HW_WORDS, *KINDS, *CPUS, *ARCHS]


def hardware_of(tokens: Sequence[str]) -> str:
    """The hardware part of a sentence's tokens ("<hw> ... ;", up to "<op>") as one string."""
    end = list(tokens).index("<op>") if "<op>" in tokens else len(tokens)
    start = list(tokens).index("<hw>") if "<hw>" in tokens else end
    return " ".join(tokens[start:end])


def hardware_fields(hardware: str) -> dict[str, str | int]:
    """A hardware string's fields, numbers read back: "<hw> kind llvm cpu znver5 cores 2^1 ; ..." ->
    {"kind": "llvm", "cpu": "znver5", "cores": 2, ...} (caches in KiB)."""
    tokens, fields, i = hardware.split(), {}, 0
    while i < len(tokens):
        word = tokens[i]
        if word in HW_WORDS[1:] and i + 1 < len(tokens):
            if is_number_token(tokens[i + 1]):
                fields[word], i = read_number(tokens, i + 1)
                continue
            fields[word] = tokens[i + 1]
            i += 1
        i += 1
    return fields


def hardware_differences(trained: str, here: str, names: tuple[str, str] = ("trained", "here")) -> list[str]:
    """What differs between two hardware strings, field by field, e.g. ["l3: 300 MiB trained, 260 MiB here"]."""
    a, b = hardware_fields(trained), hardware_fields(here)

    def show(word: str, v: str | int | None) -> str:
        if word in ("l1d", "l2", "l3") and isinstance(v, int):
            return kib_text(v)
        return "none" if v is None else str(v)

    words = [w for w in HW_WORDS[1:] if w in a or w in b]
    return [f"{w}: {show(w, a.get(w))} {names[0]}, {show(w, b.get(w))} {names[1]}" for w in words
            if a.get(w) != b.get(w)]  # fmt: skip


def hide_cpu(tokens: Sequence[str]) -> list[str]:
    """The tokens with the CPU's name written "cpu?": the numbers after it (cores, vector width, caches) are then
    all the model knows of the machine, as for a CPU it never learnt."""
    out = list(tokens)
    if "cpu" in out and out.index("cpu") + 1 < len(out):
        out[out.index("cpu") + 1] = "cpu?"
    return out


def learnt_cpu_names(trained: Sequence[str]) -> set[str]:
    """The CPU names of a checkpoint's trained hardware prompts ("cpu?" among them where it learnt hidden ones)."""
    return {str(hardware_fields(h)["cpu"]) for h in trained if "cpu" in hardware_fields(h)}


def hardware_tokens(target: Target, trained: Sequence[str] = ()) -> list[str]:
    """E.g. "<hw> kind llvm cpu znver5 cores 2^1 ; vec 2^9 ; l1d 2^4 3^1 ; l2 2^10 ; l3 2^15 ;" (caches in KiB).

    trained: the hardware prompts of the checkpoint that will read it. Where it learnt hidden names ("cpu?") but
    never this CPU's, the name is hidden: an embedding it never trained says nothing, the numbers do."""
    tokens = _hardware_tokens(target)
    names = learnt_cpu_names(trained)
    cpu = tokens[tokens.index("cpu") + 1]
    return hide_cpu(tokens) if "cpu?" in names and cpu not in names else tokens


def _hardware_tokens(target: Target) -> list[str]:
    kind = target.kind.name
    out = ["<hw>", "kind", kind if kind in KINDS else "kind?"]
    attrs = dict(target.attrs)
    if kind == "cuda":
        arch = str(attrs.get("arch", ""))
        out += ["arch", arch if arch in ARCHS else "arch?"]
        for word, key in (("threads", "max_threads_per_block"), ("smem", "max_shared_memory_per_block"),
                          ("warp", "thread_warp_size")):  # fmt: skip
            if key in attrs:
                out += [word, *number_tokens(int(attrs[key]))]
        target = target.host or target
        attrs = dict(target.attrs)
    mcpu = str(attrs.get("mcpu", "generic"))
    out += ["cpu", mcpu if mcpu in CPUS else "cpu?"]
    out += ["cores", *number_tokens(int(attrs.get("num-cores", 1)))]
    out += ["vec", *number_tokens(vector_bits(target))]
    for word, kib in zip(("l1d", "l2", "l3"), caches_kib(target), strict=True):
        if kib:
            out += [word, *number_tokens(kib)]
    return out
