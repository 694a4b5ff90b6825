"""Fusion of keyword, vector and anchor candidates: pure, so tested exhaustively."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import replace

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from memgit.errors import MemgitError
from memgit.index.ranking import CHANNELS, Channels, Ranked, Weights, apply_floor, fuse

ids = st.sampled_from([f"m{i}" for i in range(12)])
strength = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
candidates = st.lists(st.tuples(ids, strength), max_size=12, unique_by=lambda c: c[0]).map(
    lambda cs: sorted(cs, key=lambda c: -c[1])
)
maybe = st.one_of(st.none(), candidates)
channels = st.builds(Channels, keyword=maybe, vector=maybe, anchor=maybe)
weight = st.one_of(st.just(0.0), st.floats(0.01, 2))  # no subnormals: they round ties into being
weights = st.builds(
    Weights,
    keyword=weight,
    vector=weight,
    anchor=weight,
    method=st.sampled_from(["rrf", "weighted"]),
    rrf_k=st.integers(0, 100),
)


def all_ids(ch: Channels) -> set[str]:
    return {i for name in CHANNELS for i, _ in getattr(ch, name) or ()}


def score_of(ranked: list[Ranked], memory_id: str) -> float:
    return next(r.score for r in ranked if r.id == memory_id)


# -- examples -------------------------------------------------------------------------------


def test_score_is_the_weighted_mean_over_available_channels() -> None:
    w = Weights(keyword=0.25, vector=0.6, anchor=0.4)
    (hit,) = fuse(Channels(keyword=[("a", 0.8)], vector=[("a", 0.5)], anchor=[]), w)
    assert hit.relevance == pytest.approx((0.25 * 0.8 + 0.6 * 0.5) / 1.25)
    assert hit.channels == {"keyword": 0.8, "vector": 0.5}


def test_an_unavailable_channel_does_not_dilute() -> None:
    ch = Channels(keyword=[("a", 1.0)], vector=None, anchor=[("a", 1.0)])
    assert fuse(ch)[0].score == pytest.approx(1.0)
    # available but empty does count: nothing found there is evidence
    w = Weights()
    assert fuse(Channels(keyword=[("a", 1.0)], vector=[], anchor=[("a", 1.0)]))[0].score == pytest.approx(
        (w.keyword + w.anchor) / (w.keyword + w.vector + w.anchor)
    )


def test_nothing_available() -> None:
    assert fuse(Channels(None, None, None)) == []
    assert fuse(Channels()) == []


def test_rrf_orders_by_ranks_weighted_by_score() -> None:
    # b is second everywhere, a first in keywords only: rrf favours consistent b
    ch = Channels(
        keyword=[("a", 0.9), ("b", 0.8)],
        vector=[("c", 0.9), ("b", 0.85)],
        anchor=[("d", 1.0), ("b", 0.5)],
    )
    assert fuse(ch, Weights(method="rrf"))[0].id == "b"
    assert [r.id for r in fuse(ch, Weights(keyword=0.25, method="weighted"))] == ["b", "c", "d", "a"]


def test_minmax_puts_each_channels_best_on_one_scale() -> None:
    # Vector strengths are bunched (0.80-0.82) and keyword strengths spread (0.2-0.9):
    # min-max makes the vector channel's best count as much as the keyword channel's best.
    ch = Channels(keyword=[("k", 0.9), ("v", 0.2)], vector=[("v", 0.82), ("k", 0.80)], anchor=None)
    ranked = fuse(ch, Weights(keyword=0.5, vector=0.6, method="minmax"))
    assert [r.id for r in ranked] == ["v", "k"]
    assert [r.id for r in fuse(ch, Weights(keyword=0.5, vector=0.6, method="weighted"))] == ["k", "v"]


def test_boosts_multiply_and_reorder() -> None:
    ch = Channels(keyword=[("a", 0.9), ("b", 0.8)], vector=None, anchor=None)
    ranked = fuse(ch, Weights(method="weighted"), boosts={"a": 0.7})
    assert [r.id for r in ranked] == ["b", "a"]
    assert score_of(ranked, "a") == pytest.approx(0.9 * 0.7)
    # a boost above 1 is clipped in the score but still orders
    ranked = fuse(ch, Weights(method="weighted"), boosts={"a": 3.0, "b": 5.0})
    assert [(r.id, r.score) for r in ranked] == [("b", 1.0), ("a", 1.0)]


def test_a_memory_without_a_vector_is_judged_on_its_other_channels() -> None:
    # After a pull: "new" has no vector yet and is the keyword channel's only answer;
    # "old1" and "old2" are vector-only noise. Counting new's vector as 0 put it last.
    ch = Channels(keyword=[("new", 0.9)], vector=[("old1", 0.45), ("old2", 0.4)], anchor=None)
    before = fuse(ch)
    assert [r.id for r in before] == ["old1", "new", "old2"]
    assert before[1].relevance == pytest.approx(0.5 * 0.9 / 1.1)  # its vector counted as 0
    ranked = fuse(replace(ch, vectorless=frozenset({"new"})))
    assert [r.id for r in ranked] == ["new", "old1", "old2"]
    assert ranked[0].relevance == pytest.approx(0.9) and ranked[0].score == 1.0
    # ...and a vector channel that did find it wins over the `vectorless` claim
    assert fuse(replace(ch, vectorless=frozenset({"old1"}))) == before


def test_ties_break_by_id() -> None:
    ch = Channels(keyword=[("b", 0.5), ("a", 0.5), ("c", 0.5)], vector=None, anchor=None)
    assert [r.id for r in fuse(ch)] == ["a", "b", "c"]


def test_out_of_range_and_duplicate_strengths_are_tamed() -> None:
    ch = Channels(keyword=[("a", 1.7), ("b", -0.2), ("c", math.nan), ("a", 0.1)], vector=None, anchor=None)
    ranked = fuse(ch)
    assert [(r.id, r.score) for r in ranked] == [("a", 1.0), ("b", 0.0), ("c", 0.0)]


def test_zero_weights() -> None:
    w = Weights(keyword=0, vector=0, anchor=0)
    ranked = fuse(Channels(keyword=[("b", 1.0), ("a", 0.5)]), w)
    assert [(r.id, r.score) for r in ranked] == [("a", 0.0), ("b", 0.0)]


def test_apply_floor_keeps_order() -> None:
    ranked = [Ranked("a", 1.0, 0.9, {}), Ranked("b", 0.8, 0.1, {}), Ranked("c", 0.2, 0.5, {})]
    assert [r.id for r in apply_floor(ranked, 0.5)] == ["a", "c"]
    assert apply_floor(ranked, 0) == ranked


@pytest.mark.parametrize(
    "kwargs",
    [{"keyword": -1}, {"vector": math.nan}, {"anchor": math.inf}, {"method": "bm25"}, {"rrf_k": -1}],
)
def test_bad_weights_say_what_to_fix(kwargs: dict[str, object]) -> None:
    with pytest.raises(MemgitError):
        Weights(**kwargs)  # type: ignore[arg-type]


def test_bad_boost() -> None:
    with pytest.raises(MemgitError):
        fuse(Channels(keyword=[("a", 1.0)]), boosts={"a": -1.0})


def test_cheap_enough_for_300_candidates_per_channel() -> None:
    # No timing assert (see STYLE: timings belong in benchmarks); this only proves it runs.
    rnd = random.Random(0)
    pool = [f"m{i}" for i in range(600)]

    def channel() -> list[tuple[str, float]]:
        return sorted(((m, rnd.random()) for m in rnd.sample(pool, 300)), key=lambda c: -c[1])

    ranked = fuse(Channels(channel(), channel(), channel()))
    assert len({r.id for r in ranked}) == len(ranked) > 300


# -- properties -----------------------------------------------------------------------------


@settings(max_examples=400, deadline=None)
@given(channels, weights)
def test_output_is_a_permutation_of_the_inputs(ch: Channels, w: Weights) -> None:
    ranked = fuse(ch, w)
    assert sorted(r.id for r in ranked) == sorted(all_ids(ch))


@settings(max_examples=400, deadline=None)
@given(channels, weights, st.dictionaries(ids, st.floats(0, 3)))
def test_scores_are_in_unit_interval(ch: Channels, w: Weights, boosts: dict[str, float]) -> None:
    for r in fuse(ch, w, boosts):
        assert 0.0 <= r.score <= 1.0 and 0.0 <= r.relevance <= 1.0
        assert set(r.channels) <= set(CHANNELS)


@settings(max_examples=400, deadline=None)
@given(channels, weights)
def test_first_in_every_channel_ranks_first(ch: Channels, w: Weights) -> None:
    def crowned(c: Sequence[tuple[str, float]] | None) -> list[tuple[str, float]] | None:
        return None if c is None else [("top", 1.0), *((i, min(s, 0.99)) for i, s in c)]

    ch = Channels(crowned(ch.keyword), crowned(ch.vector), crowned(ch.anchor))
    assume(any(getattr(w, name) > 0 and getattr(ch, name) is not None for name in CHANNELS))
    assert fuse(ch, w)[0].id == "top"


@settings(max_examples=400, deadline=None)
@given(channels, weights, st.data())
def test_raising_a_strength_never_lowers_the_score(ch: Channels, w: Weights, data: st.DataObject) -> None:
    names = [n for n in CHANNELS if getattr(ch, n)]
    assume(names)
    name = data.draw(st.sampled_from(names))
    cands = list(getattr(ch, name))
    index = data.draw(st.integers(0, len(cands) - 1))
    memory_id, old = cands[index]
    cands[index] = (memory_id, data.draw(st.floats(old, 1.0)))
    cands.sort(key=lambda c: -c[1])
    raised = replace(ch, **{name: cands})
    assert score_of(fuse(raised, w), memory_id) >= score_of(fuse(ch, w), memory_id) - 1e-12


@settings(max_examples=400, deadline=None)
@given(channels, weights)
def test_unavailable_channel_changes_nothing_for_others(ch: Channels, w: Weights) -> None:
    # Making the vector channel unavailable gives exactly the scores fusion of the rest gives.
    without = fuse(Channels(ch.keyword, None, ch.anchor), w)
    zero_vector = Weights(w.keyword, 0.0, w.anchor, w.method, w.rrf_k)
    only_rest = fuse(Channels(ch.keyword, [], ch.anchor), zero_vector)
    assert without == only_rest


@settings(max_examples=400, deadline=None)
@given(channels, weights, st.randoms(use_true_random=False))
def test_deterministic_under_shuffles_of_equal_strengths(
    ch: Channels, w: Weights, rnd: random.Random
) -> None:
    def shuffled(c: Sequence[tuple[str, float]] | None) -> list[tuple[str, float]] | None:
        if c is None:
            return None
        c = list(c)
        rnd.shuffle(c)
        return sorted(c, key=lambda x: -x[1])  # still best first; equal strengths in any order

    again = Channels(shuffled(ch.keyword), shuffled(ch.vector), shuffled(ch.anchor))
    assert fuse(again, w) == fuse(ch, w)


@settings(max_examples=200, deadline=None)
@given(channels, weights, st.floats(0, 1))
def test_floor(ch: Channels, w: Weights, floor: float) -> None:
    ranked = fuse(ch, w)
    kept = apply_floor(ranked, floor)
    assert kept == [r for r in ranked if r.relevance >= floor]


@settings(max_examples=200, deadline=None)
@given(channels)
def test_weighted_method_orders_by_score(ch: Channels) -> None:
    ranked = fuse(ch, Weights(method="weighted"))
    keys = [(-r.score, r.id) for r in ranked]
    assert keys == sorted(keys)


@settings(max_examples=400, deadline=None)
@given(channels, st.one_of(weights, st.builds(Weights, keyword=weight, vector=weight, anchor=weight)),
       st.dictionaries(ids, st.floats(0, 3)))
def test_sorted_by_the_score_shown(ch: Channels, w: Weights, boosts: dict[str, float]) -> None:
    scores = [r.score for r in fuse(ch, w, boosts)]
    assert scores == sorted(scores, reverse=True)


@settings(max_examples=400, deadline=None)
@given(channels, st.one_of(weights, st.builds(Weights, keyword=weight, vector=weight, anchor=weight)),
       st.sets(ids))
def test_vectorless_memories_fuse_as_if_the_vector_channel_were_off(
    ch: Channels, w: Weights, missing: set[str]
) -> None:
    found_by_vector = {i for i, _ in ch.vector or ()}
    fused = {r.id: r for r in fuse(replace(ch, vectorless=frozenset(missing)), w)}
    without = {r.id: r for r in fuse(Channels(ch.keyword, None, ch.anchor), w)}
    for memory_id in missing - found_by_vector:
        if memory_id in without:
            assert fused[memory_id].relevance == pytest.approx(without[memory_id].relevance)
            assert fused[memory_id].score == pytest.approx(without[memory_id].score)
    for memory_id in set(fused) - (missing - found_by_vector):  # the others keep their numbers
        assert fused[memory_id] == next(r for r in fuse(ch, w) if r.id == memory_id)
