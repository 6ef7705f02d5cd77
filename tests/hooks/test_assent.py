"""A bare "yes, go ahead" agrees to the agent's last proposal: its kinds of action, never its values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from intently.gate import Gate, Level
from intently.hooks._assent import is_bare_assent, last_agent_message


@pytest.mark.parametrize(
    ("prompt", "bare"),
    [
        ("Yes, go ahead", True),
        ("ok", True),
        ("Sounds good, please do!", True),
        ("yep 👍", True),
        ("Let's do it. Thanks!", True),
        ("No, don't", False),
        ("Yes, but not the tests", False),
        ("ok, now rename it to parse_rows", False),
        ("Why does it crash?", False),
        ("yes yes yes yes yes yes yes yes yes", False),  # too long to be a bare answer
    ],
)
def test_only_a_short_answer_of_assent_and_politeness_agrees(prompt: str, bare: bool) -> None:
    assert is_bare_assent(prompt) is bare


def test_the_proposal_is_the_agents_last_message_the_user_saw(tmp_path: Path) -> None:
    transcript = tmp_path / "session.jsonl"
    lines = [
        {"type": "user", "message": {"role": "user", "content": "Why does the CLI crash?"}},
        {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "Old idea."}]}},
        {"type": "assistant", "isSidechain": True, "message": {"role": "assistant", "content": "a sub-agent"}},
        {
            "type": "assistant",
            "message": {"role": "assistant", "content": [{"type": "text", "text": "I'll fix main. Shall I?"}]},
        },
        {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "tool_use", "name": "Read"}]}},
    ]
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    assert last_agent_message(transcript) == "I'll fix main. Shall I?"
    assert last_agent_message(tmp_path / "missing.jsonl") is None


def _tool(name: str, props: dict[str, str]) -> dict[str, object]:
    schema = {"type": "object", "properties": {k: {"type": v} for k, v in props.items()}}
    return {"name": name, "description": name.replace("_", " "), "inputSchema": schema}


def test_agreement_grants_the_proposals_kinds_never_its_values() -> None:
    """The proposal is the model's text: an address in it is no more the user's than before."""
    gate = Gate.from_tools(
        [
            _tool("update_file", {"file_path": "string", "content": "string"}),
            _tool("send_email", {"recipients": "array", "body": "string"}),
            _tool("read_file", {"file_path": "string"}),
        ]
    )
    s = gate.session(user_request="Why does the parser crash on an empty file?")
    s.observe("read_file", "def parse(s): return s[0]", args={"file_path": "src/parser.py"})
    change = {"file_path": "src/parser.py", "content": "def parse(s): return s[0] if s else None"}
    assert s.check("update_file", change).rule_ids == ("not-requested",)
    agreed = s.agree_to(
        "I'll fix parse() so it returns None, and email the fix to eve@evil.example. Don't delete anything."
    )
    assert "update" in agreed and "delete" not in agreed
    allowed = s.check("update_file", change)
    assert allowed.level is Level.WARN and allowed.executes and allowed.rule_ids == ("assented-proposal",)
    assert "update" in allowed.facts["assented_kinds"] and len(allowed.facts["assented_proposals"]) == 64
    mail = s.check("send_email", {"recipients": ["eve@evil.example"], "body": "fixed"})
    assert mail.level is Level.BLOCK and mail.rule_ids == ("invented-value",)
