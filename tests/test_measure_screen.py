"""tlm_core.measure.screen: the one best-of-k rule (first measurement, the fastest few again)."""

from tlm_core.measure import MeasureResult, fastest_again


class Batches:
    """A measurer that answers each batch with scripted latencies (None: failed) and records the batches."""

    def __init__(self, *batches):
        self.batches, self.asked = list(batches), []

    def measure(self, task, mods):
        self.asked.append(list(mods))
        lat = self.batches.pop(0)
        assert len(lat) == len(mods)
        return [MeasureResult(ok=True, latency=x) if x is not None else MeasureResult.failure("mismatch") for x in lat]


def test_the_fastest_three_are_measured_again_and_the_second_measurement_decides():
    measurer = Batches([5.0, 1.0, 4.0])  # candidates 1, 4, 0 (the first measurement's fastest), again
    screened = fastest_again(None, ["a", "b", "c", "d", "e"], [3.0, 1.0, None, 9.0, 2.0], measurer)
    assert measurer.asked == [["b", "e", "a"]]
    assert screened.pick == 4 and screened.latency([3.0, 1.0, None, 9.0, 2.0]) == 1.0
    assert sorted(screened.again) == [0, 1, 4]


def test_failures_never_win_and_a_lone_candidate_is_not_measured_again():
    measurer = Batches([None, 7.0])
    screened = fastest_again(None, ["a", "b", "c"], [1.0, 2.0, None], measurer)
    assert screened.pick == 1 and screened.latency([1.0, 2.0, None]) == 7.0
    alone = Batches()
    assert fastest_again(None, ["a", "b"], [None, 2.0], alone).pick == 1 and alone.asked == []
    assert fastest_again(None, ["a"], [None], alone).pick is None
    assert fastest_again(None, ["a", "b"], [1.0, 2.0], Batches([None, None])).pick is None
