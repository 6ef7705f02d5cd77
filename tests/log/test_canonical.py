"""The leaf data is the operation's RFC 8785 JSON. ``Operation.canonical()`` builds it by
string assembly for speed; here it must equal ``rfc8785.dumps(op.to_json())`` byte for byte
for any text and any JSON payload."""

from __future__ import annotations

from typing import Any

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from intently import Intently, InvalidInput
from intently.log import Operation, canonical_json, canonical_operation

# Any Unicode scalar value (no lone surrogates: those are not text and are refused).
text = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=40)
control_heavy = st.text(
    st.sampled_from(['"', "\\", "\x00", "\x1f", "\x7f", "\b", "\f", "\n", "\r", "\t", "\u2028", "é", "😀", "/"]),
    max_size=20,
)
any_text = st.one_of(text, control_heavy)
json_numbers = st.one_of(
    st.integers(-(2**53) + 1, 2**53 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
)
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), json_numbers, any_text),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(any_text, inner, max_size=4)),
    max_leaves=15,
)


def make(payload: dict[str, Any], **fields: Any) -> Operation:
    base = dict(
        stream="proj",
        seq=1,
        id="0190aaaa-0000-7000-8000-000000000000",
        time="2026-03-02T09:00:00.000000Z",
        actor="user:alice",
        op="GRANT",
        target="user:bob",
        policy_version="access@1",
    )
    base.update(fields)
    return Operation(payload_json=canonical_json(payload).decode(), payload=payload, **base)


@settings(max_examples=200, deadline=None)
@given(
    payload=st.dictionaries(any_text, json_values, max_size=5),
    stream=any_text,
    seq=st.integers(1, 2**53 - 1),
    strings=st.tuples(any_text, any_text, any_text, any_text, any_text, any_text),
)
def test_canonical_equals_rfc8785_of_to_json(
    payload: dict[str, Any], stream: str, seq: int, strings: tuple[str, ...]
) -> None:
    id_, time, actor, op, target, pv = strings
    operation = make(
        payload, stream=stream, seq=seq, id=id_, time=time, actor=actor, op=op, target=target, policy_version=pv
    )
    assert operation.canonical() == rfc8785.dumps(operation.to_json())


@pytest.mark.parametrize(
    "char", [chr(c) for c in range(0x20)] + ['"', "\\", "\x7f", "\u2028", "\u2029", "\ufeff", "\U0010ffff"]
)
def test_every_escape_matches_jcs(char: str) -> None:
    operation = make({char: char}, target=f"a{char}b", actor=char)
    assert operation.canonical() == rfc8785.dumps(operation.to_json())


def test_payload_key_order_is_utf16_code_unit_order() -> None:
    # JCS sorts by UTF-16 code units: U+1F600 (surrogates D83D...) sorts before U+FB01.
    payload = {"\ufb01": 1, "\U0001f600": 2, "a": 3}
    assert canonical_json(payload) == '{"a":3,"\U0001f600":2,"\ufb01":1}'.encode()
    operation = make(payload)
    assert operation.canonical() == rfc8785.dumps(operation.to_json())


@pytest.mark.parametrize("number", [2.0**53, 2.0**60, -(2.0**70), 1e20, 1e21, 1e300, 5e-324, -0.0, 0.1])
def test_large_and_odd_doubles_round_trip(number: float) -> None:
    operation = make({"n": number})
    assert operation.canonical() == rfc8785.dumps(operation.to_json())
    assert operation.to_json()["payload"]["n"] == number


def test_canonical_operation_from_stored_fields_equals_the_method() -> None:
    operation = make({"x": [1, 2.5, None]})
    assert operation.canonical() == canonical_operation(
        operation.stream,
        operation.seq,
        operation.id,
        operation.time,
        operation.actor,
        operation.op,
        operation.target,
        operation.payload_json,
        operation.policy_version,
    )


@pytest.mark.parametrize(
    "payload",
    [{"n": 2**60}, {"f": float("nan")}, {"f": float("inf")}, {1: "non-string key"}, {"b": b"bytes"}, {"s": "\ud800"}],
)
def test_payloads_jcs_cannot_represent_are_invalid_input(ix: Intently, payload: dict[Any, Any]) -> None:
    with ix.store.transaction() as tx, pytest.raises(InvalidInput, match="payload"):
        ix.log.append(
            tx, namespace="proj", actor="user:alice", op="TEST_OP", target="t", payload=payload, policy_version="t@1"
        )
    assert ix.log.size("proj") == 1  # only HOME_INIT


def test_lone_surrogate_in_a_field_is_invalid_input_and_nothing_is_written(ix: Intently) -> None:
    with pytest.raises(InvalidInput, match="Unicode"), ix.store.transaction() as tx:
        ix.log.append(
            tx, namespace="proj", actor="user:alice", op="TEST_OP", target="\udc80", payload={}, policy_version="t@1"
        )
    assert ix.log.size("proj") == 1
    assert ix.log.verify().ok


@pytest.mark.parametrize("op", ["grant", "Grant", "GRANT-X", "", "GRANT X"])
def test_op_types_must_be_upper_snake_case(ix: Intently, op: str) -> None:
    with ix.store.transaction() as tx, pytest.raises(InvalidInput, match="UPPER_SNAKE"):
        ix.log.append(tx, namespace="proj", actor="user:alice", op=op, target="t", payload={}, policy_version="t@1")


@settings(max_examples=15, deadline=None)
@given(payload=st.dictionaries(any_text, json_values, max_size=4), target=text)
def test_appended_operations_round_trip_through_the_store(
    tmp_path_factory: pytest.TempPathFactory, payload: dict[str, Any], target: str
) -> None:
    """Whatever is appended reads back with the same canonical bytes and verifies."""
    from intently import ManualClock

    root = tmp_path_factory.mktemp("p")
    with Intently.init(root, actor="user:alice", name="proj", clock=ManualClock()) as ix:
        with ix.store.transaction() as tx:
            written = ix.log.append(
                tx,
                namespace="proj",
                actor="user:alice",
                op="TEST_OP",
                target=target,
                payload=payload,
                policy_version="t@1",
            )
        (read,) = ix.log.read("proj", after=1)
        assert read.canonical() == written.canonical() == rfc8785.dumps(read.to_json())
        assert read.payload == payload  # numbers compare by value: 1.0 == 1, -0.0 == 0
        assert ix.log.verify().ok


def test_text_with_a_nul_character_is_refused_on_every_backend(ix: Intently) -> None:
    """PostgreSQL cannot store NUL in text, so no backend accepts it (store copy stays lossless)."""
    before = ix.log.size("proj")
    with ix.store.transaction() as tx, pytest.raises(InvalidInput, match="NUL"):
        ix.log.append(
            tx, namespace="proj", actor="user:alice", op="TEST_OP", target="a\x00b", payload={}, policy_version="t@1"
        )
    assert ix.log.size("proj") == before
