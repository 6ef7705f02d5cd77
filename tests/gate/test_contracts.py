"""Contracts: inferred from tool definitions by documented rules, overridable, fail closed."""

from __future__ import annotations

from typing import Any

import pytest

from intently.core.errors import PolicyError
from intently.gate import Gate, Level, Role, SideEffect, default_bundle

from .conftest import S, _tool


def test_inference_reads_verbs_nouns_and_argument_names(tools: list[dict[str, Any]]) -> None:
    gate = Gate.from_tools(tools)
    send = gate.contract("send_email")
    assert send is not None
    assert send.side_effect is SideEffect.EXTERNAL_COMM
    assert send.kinds == {"communicate"}
    assert send.role_of("recipients") is Role.RECIPIENT
    assert send.role_of("body") is Role.CONTENT
    money = gate.contract("send_money")
    assert money is not None and money.side_effect is SideEffect.FINANCIAL
    assert money.role_of("recipient") is Role.PAYEE  # a money tool's recipient is a payee
    assert money.role_of("amount") is Role.AMOUNT
    password = gate.contract("update_password")
    assert password is not None and password.side_effect is SideEffect.CREDENTIAL
    assert gate.contract("search_emails") is not None
    assert gate.contract("search_emails").side_effect is SideEffect.NONE  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("arg", "role"),
    [
        ("filePath", Role.PATH),  # camelCase, as many MCP servers spell it
        ("file-path", Role.PATH),
        ("target_path", Role.PATH),  # a qualified name keeps its head's role
        ("outputFile", Role.PATH),
        ("callbackUrl", Role.URL),
        ("repo_url", Role.URL),
        ("ownerEmail", Role.RECIPIENT),
        ("userId", Role.TARGET),
        ("adminPassword", Role.CREDENTIAL),
        ("sort_key", Role.OTHER),  # "key" is not an unambiguous head
        ("page_size", Role.OTHER),
    ],
)
def test_argument_names_keep_their_role_however_a_server_spells_them(arg: str, role: Role) -> None:
    """A name that escaped its role would escape the provenance check: an invented callbackUrl
    must block like an invented url."""
    contract = Gate.from_tools([_tool("post_update", "Post an update.", {arg: S, "text": S})]).contract("post_update")
    assert contract is not None and contract.role_of(arg) is role


def test_an_invented_camel_case_url_is_refused() -> None:
    gate = Gate.from_tools([_tool("send_report", "Send a report.", {"callbackUrl": S, "body": S})])
    d = gate.session(user_request="Send the weekly report").check(
        "send_report", {"callbackUrl": "https://collector.example/r", "body": "Weekly report"}
    )
    assert d.level is Level.BLOCK and d.rule_ids == ("invented-value",)


def test_description_reveals_a_read_that_writes(tools: list[dict[str, Any]]) -> None:
    unread = Gate.from_tools(tools).contract("get_unread_emails")
    assert unread is not None
    assert unread.side_effect is SideEffect.LOCAL_WRITE
    assert any("marked as read" in n for n in unread.notes)
    assert unread.risk == "medium"  # a side effect the name hides is not a low-risk call


def test_annotations_only_make_a_contract_stricter() -> None:
    hinted = [
        _tool("update_note", "Update a note.", {"note_id": S}, destructiveHint=True),
        _tool("delete_note", "Delete a note.", {"note_id": S}, readOnlyHint=True),
    ]
    gate = Gate.from_tools(hinted)
    assert gate.contract("update_note").side_effect is SideEffect.DESTRUCTIVE  # type: ignore[union-attr]
    # readOnlyHint cannot turn a delete into a read
    assert gate.contract("delete_note").side_effect is SideEffect.DESTRUCTIVE  # type: ignore[union-attr]


def test_a_tool_without_a_contract_is_blocked(tools: list[dict[str, Any]]) -> None:
    gate = Gate.from_tools(tools)
    assert gate.contract("frobnicate") is None
    session = gate.session(user_request="frobnicate x please")
    decision = session.check("frobnicate", {"x": "1"})
    assert decision.level is Level.BLOCK
    assert decision.rule_ids == ("no-contract",)
    assert session.check("not_listed_at_all", {}).level is Level.BLOCK


def test_explicit_data_overrides_inference(tools: list[dict[str, Any]]) -> None:
    gate = Gate.from_tools(
        tools, overrides={"frobnicate": {"kinds": ["update"], "side_effect": "local-write", "fields": {"x": "target"}}}
    )
    c = gate.contract("frobnicate")
    assert c is not None and c.side_effect is SideEffect.LOCAL_WRITE and c.role_of("x") is Role.TARGET
    assert c.source == "explicit"


def test_a_bad_override_names_the_tool() -> None:
    with pytest.raises(PolicyError, match=r"tools\.broken"):
        default_bundle().contracts.with_overrides({"broken": {"side_effect": "teleport"}})
    with pytest.raises(PolicyError, match=r"tools\.fetch_page: name_words"):
        default_bundle().contracts.with_overrides({"fetch_page": {"side_effect": "egress", "name_words": "page"}})


def test_name_words_say_what_a_request_must_name_for_a_tool_without_action_kinds() -> None:
    """A tool with no action kind is authorised when the request names its objects and the
    words of its name; an explicit contract can set those words (none for a harness's own names)."""
    fetch = {"kinds": [], "side_effect": "egress", "objects": ["web"], "fields": {"url": "url"}}
    strict = Gate(tools=[], overrides={"WebFetch": fetch})
    loose = Gate(tools=[], overrides={"WebFetch": {**fetch, "name_words": []}})
    request = "Summarise https://example.com/post for me"
    args = {"url": "https://example.com/post"}
    assert strict.session(user_request=request).check("WebFetch", args).rule_ids == ("not-requested",)
    assert loose.session(user_request=request).check("WebFetch", args).level is Level.ALLOW
