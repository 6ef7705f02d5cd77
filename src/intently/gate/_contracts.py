"""Action contracts as data, and their inference from MCP-style tool definitions.

A contract says what a tool does: the action kinds a request must authorise for it, its side
effect class, its risk, when to ask the user, the role of each argument (recipient, payee,
URL, target id, amount, path, content, ...) and postconditions on the state diff. Explicit
contracts override inferred ones field by field; a tool with neither has no contract and the
gate blocks it. MCP annotations are hints: they can make a contract stricter, never looser.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ..core.errors import PolicyError
from ._values import words
from ._vocabulary import Vocabulary, stem_all

__all__ = ["Contract", "ContractSet", "FieldSpec", "Role", "SideEffect", "ToolDefinition", "open_world_by_default"]


def open_world_by_default(definition: Mapping[str, Any]) -> dict[str, Any]:
    """An MCP tool definition with the specification's default for the hint that decides where
    data goes: a tool that does not say otherwise may reach an open world of external entities
    (``openWorldHint`` true). A write by such a tool (``create_issue``) lands wherever its server
    reaches, so it is held to the rules for what leaves; ``openWorldHint: false`` keeps it local."""
    annotations = dict(definition.get("annotations") or {})
    annotations.setdefault("openWorldHint", True)
    return {**definition, "annotations": annotations}


def snake_case(name: str) -> str:
    """``filePath`` / ``file-path`` / ``File Path`` -> ``file_path`` (``URLPath`` -> ``url_path``)."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name.strip())
    return re.sub(r"[^0-9a-zA-Z]+", "_", spaced).strip("_").lower()


class SideEffect(StrEnum):
    NONE = "none"
    LOCAL_WRITE = "local-write"
    EXTERNAL_COMM = "external-comm"
    DESTRUCTIVE = "destructive"
    FINANCIAL = "financial"
    CREDENTIAL = "credential"
    COMMAND = "command"
    EGRESS = "egress"


# Stricter classes win when two rules disagree.
_STRICTNESS = [
    SideEffect.NONE,
    SideEffect.LOCAL_WRITE,
    SideEffect.EGRESS,
    SideEffect.EXTERNAL_COMM,
    SideEffect.DESTRUCTIVE,
    SideEffect.CREDENTIAL,
    SideEffect.FINANCIAL,
    SideEffect.COMMAND,
]


# Constraints on a shell command's argument (read with the gate's shell reader): the paths it
# writes must match ``writes_must_match`` (the file tools' guard, applied to ``>``, ``cp``,
# ``sed -i``...), and ``runs: intently-read-only`` lets it run only intently's read-only commands.
_COMMAND_CONSTRAINTS = ("must_match", "writes_must_match", "runs")
_RUNS = ("intently-read-only",)


def _validate_constraint(c: Mapping[str, Any]) -> None:
    """A constraint names its argument and at least one known check (fail closed: an unknown one
    would otherwise check nothing)."""
    str(c["arg"])
    if not any(k in c for k in _COMMAND_CONSTRAINTS):
        raise ValueError(f"a constraint needs one of {', '.join(_COMMAND_CONSTRAINTS)}")
    for key in ("must_match", "writes_must_match"):
        if key in c:
            re.compile(str(c[key]))
    if "runs" in c and c["runs"] not in _RUNS:
        raise ValueError(f"constraint runs must be one of {', '.join(_RUNS)}, not {c['runs']!r}")


def _command_violations(c: Mapping[str, Any], value: object, root: str | None) -> list[str]:
    """Messages of the command constraints (``writes_must_match``, ``runs``) ``value`` breaks,
    run in the folder ``root`` (where the patches it applies are read)."""
    if not isinstance(value, str) or not ("writes_must_match" in c or "runs" in c):
        return []
    from ._selfguard import guarded_writes, intently_acts

    out: list[str] = []
    if "writes_must_match" in c and (written := guarded_writes(value, str(c["writes_must_match"]), root)):
        out.append(f"{c.get('message') or 'it writes a guarded path'} ({', '.join(written)})")
    if c.get("runs") == "intently-read-only" and (acts := intently_acts(value, root)):
        said = c.get("runs_message") or "it runs intently commands only the person may run"
        out.append(f"{said} ({'; '.join(acts)})")
    return out


def breaks_constraint(constraint: Mapping[str, Any], value: object) -> bool:
    """Whether ``value`` fails a declarative ``must_match`` constraint: the pattern must match
    the whole value, in any case, across lines. One reading for the gate and for the hook that
    checks where a path really leads."""
    return re.fullmatch(str(constraint["must_match"]), str(value), re.IGNORECASE | re.DOTALL) is None


# Argument names by which a reading tool would send data along with its request.
_BODY_ARGS = frozenset({"body", "data", "payload", "form", "form_data", "post_data", "json", "json_body", "method"})


def _stricter(a: SideEffect, b: SideEffect) -> SideEffect:
    return a if _STRICTNESS.index(a) >= _STRICTNESS.index(b) else b


class Role(StrEnum):
    RECIPIENT = "recipient"
    PAYEE = "payee"
    URL = "url"
    TARGET = "target"
    AMOUNT = "amount"
    PATH = "path"
    CONTENT = "content"
    CREDENTIAL = "credential"
    IDENTITY = "identity"
    TIME = "time"
    COMMAND = "command"
    QUERY = "query"
    OTHER = "other"


# Roles whose values must be traced to a trustworthy source before a side effect.
ENTITY_ROLES = frozenset({Role.RECIPIENT, Role.PAYEE, Role.URL, Role.TARGET, Role.PATH, Role.CREDENTIAL, Role.IDENTITY})


@dataclass(frozen=True)
class ToolDefinition:
    """An MCP-style tool description: the only thing inference may read."""

    name: str
    description: str = ""
    input_schema: Mapping[str, Any] = field(default_factory=dict)
    annotations: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, data: Mapping[str, Any] | ToolDefinition) -> ToolDefinition:
        """Read one MCP tool definition, refusing a malformed one with a :class:`PolicyError`
        that names the tool and the field.

        Definitions come from MCP servers, which are not trusted: a schema that is not an
        object, or ``properties`` / ``required`` / ``annotations`` of the wrong shape, would
        otherwise surface as a bare ValueError or AttributeError deep in inference (or, for a
        ``required`` string, be read letter by letter)."""
        if isinstance(data, ToolDefinition):
            return data
        if not isinstance(data, Mapping):
            raise PolicyError(f"a tool definition must be an object with a `name`, got {type(data).__name__}")
        name = data.get("name")
        if not isinstance(name, str) or not name:
            raise PolicyError("a tool definition needs a non-empty `name`")
        key = "inputSchema" if data.get("inputSchema") else "input_schema"
        schema = _object_field(name, key, data.get(key))
        props = _object_field(name, f"{key}.properties", schema.get("properties"))
        for arg in props:
            if not isinstance(arg, str):
                raise PolicyError(f"tool {name!r}: {key}.properties: argument name {arg!r} is not a string")
        required = schema.get("required")
        if required is not None and (
            not isinstance(required, list | tuple) or not all(isinstance(r, str) for r in required)
        ):
            raise PolicyError(f"tool {name!r}: {key}.required must be a list of argument names")
        return cls(
            name=name,
            description=str(data.get("description") or ""),
            input_schema=schema,
            annotations=_object_field(name, "annotations", data.get("annotations")),
        )


def _object_field(tool: str, where: str, value: Any) -> dict[str, Any]:
    """``value`` as a dict: absent (None, or empty) is ``{}``; anything but an object is refused."""
    if not value:
        return {}
    if not isinstance(value, Mapping):
        raise PolicyError(f"tool {tool!r}: {where} must be an object, got {type(value).__name__}")
    return dict(value)


def _type_of(spec: Any) -> str:
    """A property's JSON type (its own, or its first ``anyOf`` option's), else ``any``: a
    property schema of any other shape says nothing about the type, and is not an error."""
    if not isinstance(spec, Mapping):
        return "any"
    typ = spec.get("type")
    if not typ:
        options = spec.get("anyOf")
        first = options[0] if isinstance(options, list) and options else None
        typ = first.get("type") if isinstance(first, Mapping) else None
    return str(typ or "any")


@dataclass(frozen=True)
class FieldSpec:
    name: str
    role: Role
    type: str = "string"
    required: bool = False


@dataclass(frozen=True)
class Contract:
    tool: str
    kinds: frozenset[str]
    side_effect: SideEffect
    risk: str
    confirm: str  # never | always | unless_bound
    fields: Mapping[str, FieldSpec]
    objects: frozenset[str] = frozenset()
    postconditions: tuple[Mapping[str, Any], ...] = ()
    stage: str | None = None
    source: str = "explicit"
    notes: tuple[str, ...] = ()
    constraints: tuple[Mapping[str, Any], ...] = ()
    name_words: frozenset[str] = frozenset()

    def missing(self, args: Mapping[str, Any]) -> list[str]:
        """The required fields ``args`` leave out, in the contract's order.

        A field is required when the tool's schema lists it in ``required`` or an explicit
        contract says ``required: true``. Absent or ``null`` is missing; so is an empty string or
        list where the field names an entity (a recipient, payee, path, id): a send with no
        recipient or a payment with no payee has no destination the gate could trace, and
        letting it through would read as "every value is accounted for"."""
        out = []
        for name, spec in self.fields.items():
            if not spec.required:
                continue
            value = args.get(name)
            if value is None or (spec.role in ENTITY_ROLES and value in ("", [], {})):
                out.append(name)
        return out

    def violations(self, args: Mapping[str, Any], root: str | None = None) -> list[str]:
        """Messages of the declarative argument constraints ``args`` break (``must_match``, and
        a command's ``writes_must_match`` and ``runs``, read as run in the folder ``root``)."""
        out = []
        for c in self.constraints:
            value = args.get(str(c["arg"]))
            if value is None:
                continue
            if "must_match" in c and breaks_constraint(c, value):
                out.append(str(c.get("message") or f"{c['arg']} does not match {c['must_match']}"))
            out += _command_violations(c, value, root)
        return out

    def role_of(self, arg: str) -> Role:
        spec = self.fields.get(arg)
        return spec.role if spec else Role.OTHER

    def to_json(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "kinds": sorted(self.kinds),
            "side_effect": str(self.side_effect),
            "risk": self.risk,
            "confirm": self.confirm,
            "fields": {
                k: {"role": str(v.role), "type": v.type, "required": v.required} for k, v in self.fields.items()
            },
            "objects": sorted(self.objects),
            "postconditions": [dict(p) for p in self.postconditions],
            "stage": self.stage,
            "constraints": [dict(c) for c in self.constraints],
            "source": self.source,
            "notes": list(self.notes),
        }


#: The postcondition checks the sandbox runner knows, and the keys each one needs.
POSTCONDITION_CHECKS: Mapping[str, frozenset[str]] = {
    "unchanged": frozenset({"collection"}),
    "max_added": frozenset({"collection", "count"}),
    "max_removed": frozenset({"collection", "count"}),
    "no_secret_in": frozenset({"collection"}),
}
_POSTCONDITION_KEYS = frozenset({"check", "collection", "count", "unless_approved"})


def _validate_postconditions(where: str, postconditions: Any) -> None:
    """Refuse a postcondition definition that could not be checked, at load.

    A misspelled check, a missing collection or count, or a count that is not a number would
    otherwise pass silently or crash the runner after the calls' side effects happened, with
    nothing recorded; refused here, the gate is never built with it (fail closed)."""
    if not isinstance(postconditions, list | tuple):
        raise PolicyError(f"{where}: postconditions must be a list")
    for i, pc in enumerate(postconditions):
        at = f"{where}: postconditions[{i}]"
        if not isinstance(pc, Mapping):
            raise PolicyError(f"{at} must be an object with a check and a collection")
        check = pc.get("check")
        if check not in POSTCONDITION_CHECKS:
            raise PolicyError(f"{at}.check must be one of {', '.join(sorted(POSTCONDITION_CHECKS))}, not {check!r}")
        absent = sorted(POSTCONDITION_CHECKS[str(check)] - set(pc))
        if absent:
            raise PolicyError(f"{at}.{absent[0]} is missing (the {check} check needs it)")
        unknown = sorted(set(pc) - _POSTCONDITION_KEYS)
        if unknown:
            raise PolicyError(f"{at}.{unknown[0]} is not a postcondition field")
        if not isinstance(pc["collection"], str) or not pc["collection"]:
            raise PolicyError(f"{at}.collection must be a collection name")
        count = pc.get("count", 0)
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise PolicyError(f"{at}.count must be a whole number of at least 0, not {count!r}")
        if not isinstance(pc.get("unless_approved", False), bool):
            raise PolicyError(f"{at}.unless_approved must be true or false")


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _name_words(name: str) -> list[str]:
    return words(_CAMEL.sub(" ", name).replace("_", " ").replace("-", " ").replace(".", " "))


class ContractSet:
    """Explicit contracts plus the inference rules, both loaded from bundle data."""

    def __init__(self, data: Mapping[str, Any], vocabulary: Vocabulary, *, where: str = "contracts") -> None:
        self._vocab = vocabulary
        self._where = where
        try:
            inf = data.get("inference", {})
            self._verbs: dict[str, Mapping[str, Any]] = {stem_all([k])[0]: v for k, v in inf.get("verbs", {}).items()}
            self._money = set(stem_all(inf.get("money_words", [])))
            self._credential = set(stem_all(inf.get("credential_words", [])))
            self._effects = [
                (re.compile(e["pattern"], re.IGNORECASE), SideEffect(e["side_effect"]))
                for e in inf.get("description_effects", [])
            ]
            self._roles = [(re.compile(r["match"], re.IGNORECASE), Role(r["role"])) for r in inf.get("roles", [])]
            self._role_heads = [
                (re.compile(r["match"], re.IGNORECASE), Role(r["role"])) for r in inf.get("role_heads", [])
            ]
            self._money_recipient = Role(inf.get("money_recipient_role", "payee"))
            self._annotations: Mapping[str, Mapping[str, Any]] = inf.get("annotations", {})
            self._explicit: dict[str, Mapping[str, Any]] = dict(data.get("tools", {}) or {})
            self.version = str(data.get("version", "0"))
        except (KeyError, TypeError, ValueError, re.error) as exc:
            raise PolicyError(f"{where}: malformed contracts ({type(exc).__name__}: {exc})") from exc
        for name, spec in self._explicit.items():
            self._validate(name, spec)

    def _validate(self, name: str, spec: Mapping[str, Any]) -> None:
        try:
            if "side_effect" in spec:
                SideEffect(spec["side_effect"])
            for arg, role in (spec.get("fields") or {}).items():
                Role(role if isinstance(role, str) else role["role"])
                if not isinstance(role, str) and not isinstance(role.get("required", False), bool):
                    raise ValueError(f"fields.{arg}.required must be true or false")
            for c in spec.get("constraints") or []:
                _validate_constraint(c)
            if "name_words" in spec and not isinstance(spec["name_words"], list):
                raise ValueError("name_words must be a list of words")
            if spec.get("confirm", "unless_bound") not in {"never", "always", "unless_bound"}:
                raise ValueError(f"confirm must be never, always or unless_bound, not {spec.get('confirm')!r}")
        except (ValueError, TypeError, KeyError, AttributeError, re.error) as exc:
            raise PolicyError(f"{self._where}: tools.{name}: {exc}") from exc
        _validate_postconditions(f"{self._where}: tools.{name}", spec.get("postconditions", ()))

    def verb_rule(self, word: str) -> Mapping[str, Any] | None:
        """The inference rule for a tool-name verb (stemmed lookup), if any."""
        return self._verbs.get(stem_all([word])[0])

    @property
    def explicit_tools(self) -> list[str]:
        return sorted(self._explicit)

    def contract_for(self, tool: ToolDefinition | Mapping[str, Any] | None, name: str | None = None) -> Contract | None:
        """The contract for a tool: inferred from its definition, overridden by explicit data."""
        definition = ToolDefinition.parse(tool) if tool is not None else None
        tool_name = definition.name if definition else name
        if tool_name is None:
            return None
        inferred = self.infer(definition) if definition else None
        explicit = self._explicit.get(tool_name)
        if explicit is None:
            return inferred
        return self._apply_explicit(tool_name, explicit, inferred)

    def infer(self, tool: ToolDefinition) -> Contract | None:
        """Apply the documented inference rules; ``None`` when the name's verb is unknown."""
        name_words = _name_words(tool.name)
        stems = stem_all(name_words)
        if not stems or stems[0] not in self._verbs:
            return None
        rule = self._verbs[stems[0]]
        notes = [f"verb {name_words[0]!r}"]
        kinds = set(rule.get("kinds", []))
        effect = SideEffect(rule["side_effect"])
        risk = str(rule.get("risk", "medium"))
        # "find_and_replace", "get_or_create_user": the verb after "and"/"or" is a second action,
        # and the call is as strict as the stricter of the two (a read that also writes writes).
        for at in range(1, len(stems) - 1):
            second = self._verbs.get(stems[at + 1]) if name_words[at] in ("and", "or") else None
            if second is None:
                continue
            kinds |= set(second.get("kinds", []))
            stricter = _stricter(effect, SideEffect(second["side_effect"]))
            if stricter is not effect:
                effect, risk = stricter, str(second.get("risk", risk))
            notes.append(f"second verb {name_words[at + 1]!r}")
        rest = set(stems[1:])
        money = bool(rest & self._money) and effect is not SideEffect.NONE
        if money:
            effect, risk = _stricter(effect, SideEffect.FINANCIAL), "high"
            kinds.add("pay")
            notes.append("money noun: financial")
        if rest & self._credential and effect is not SideEffect.NONE:
            effect, risk = _stricter(effect, SideEffect.CREDENTIAL), "high"
            notes.append("credential noun: credential")
        for pattern, extra in self._effects:
            if pattern.search(tool.description):
                effect = _stricter(effect, extra)
                notes.append(f"description says {pattern.pattern!r}: {extra}")
        # A hint that declares an effect (destructiveHint) wins over a reading name: the server
        # says the tool destroys, and a name is no evidence against that (get_messages that
        # deletes what it returns). readOnlyHint true is the one exception (the specification
        # says destructiveHint is then meaningless). A hint that only raises (openWorldHint,
        # true by default) never turns a read into a write.
        read_only = bool(tool.annotations.get("readOnlyHint"))
        for hint, change in self._annotations.items():
            if tool.annotations.get(hint):
                if "side_effect" in change and (effect is not SideEffect.NONE or not read_only):
                    effect = _stricter(effect, SideEffect(change["side_effect"]))
                    notes.append(f"annotation {hint}")
                if "raise_to" in change and effect is not SideEffect.NONE:
                    effect = _stricter(effect, SideEffect(change["raise_to"]))
                    notes.append(f"annotation {hint}")
        if effect is not SideEffect.NONE and risk == "low" and SideEffect(rule["side_effect"]) is SideEffect.NONE:
            risk = "medium"  # a read whose description reveals a side effect is not a low-risk call
        fields = self._fields(tool.input_schema, money)
        carried = sorted(set(fields) & _BODY_ARGS)
        if effect is SideEffect.NONE and carried:
            # A read that takes a body or a method sends data to whatever it opens
            # (fetch_url(url, method="POST", body=...)): it is egress, held to the rules for what leaves.
            effect, risk = SideEffect.EGRESS, "medium"
            notes.append(f"carries {', '.join(carried)}: egress")
        objects = self._vocab.objects_in(stems[1:]) or self._vocab.objects_in(stem_all(words(tool.description))[:12])
        confirm = "unless_bound" if effect is not SideEffect.NONE else "never"
        return Contract(
            tool=tool.name,
            kinds=frozenset(kinds),
            side_effect=effect,
            risk=risk if effect is not SideEffect.NONE else "low",
            confirm=confirm,
            fields=fields,
            objects=frozenset(objects),
            source="inferred",
            notes=tuple(notes),
            name_words=frozenset(stems[1:]),
        )

    def _fields(self, schema: Mapping[str, Any], money: bool) -> dict[str, FieldSpec]:
        props = schema.get("properties") or {}
        required = set(schema.get("required") or [])
        out: dict[str, FieldSpec] = {}
        for arg, spec in props.items():
            role = self.role_of_name(arg)
            if money and role is Role.RECIPIENT:
                role = self._money_recipient
            out[arg] = FieldSpec(arg, role, _type_of(spec), arg in required)
        return out

    def role_of_name(self, arg: str) -> Role:
        """The role an argument's name gives it. Servers spell one name many ways (``filePath``,
        ``file-path``, ``file_path``) and qualify it (``target_path``, ``callbackUrl``); a name
        that escaped its role would escape the provenance check, so the name is read in snake
        case, whole first, then by its last word for the unambiguous heads (``role_heads``)."""
        name = snake_case(arg)
        for pattern, role in self._roles:
            if pattern.fullmatch(name):
                return role
        head = name.rsplit("_", 1)[-1]
        for pattern, role in self._role_heads:
            if pattern.fullmatch(head):
                return role
        return Role.OTHER

    def _apply_explicit(self, name: str, spec: Mapping[str, Any], base: Contract | None) -> Contract:
        fields: dict[str, FieldSpec] = dict(base.fields) if base else {}
        for arg, role in (spec.get("fields") or {}).items():
            r = role if isinstance(role, str) else role["role"]
            old = fields.get(arg)
            required = bool(old.required if old else False)
            if not isinstance(role, str) and "required" in role:
                required = bool(role["required"])
            fields[arg] = FieldSpec(arg, Role(r), old.type if old else "string", required)
        effect = SideEffect(spec["side_effect"]) if "side_effect" in spec else (base.side_effect if base else None)
        if effect is None:
            raise PolicyError(f"{self._where}: tools.{name}: no side_effect and nothing to infer it from")
        default_confirm = "unless_bound" if effect is not SideEffect.NONE else "never"
        return Contract(
            tool=name,
            kinds=frozenset(spec["kinds"]) if "kinds" in spec else (base.kinds if base else frozenset()),
            side_effect=effect,
            risk=str(spec.get("risk", base.risk if base else "medium")),
            confirm=str(spec.get("confirm", base.confirm if base else default_confirm)),
            fields=fields,
            objects=frozenset(spec["objects"]) if "objects" in spec else (base.objects if base else frozenset()),
            postconditions=tuple(spec.get("postconditions", base.postconditions if base else ())),
            stage=spec.get("stage", base.stage if base else None),
            constraints=tuple(spec.get("constraints", base.constraints if base else ())),
            source="explicit" if base is None else "inferred+explicit",
            notes=(base.notes if base else ()),
            name_words=(
                frozenset(stem_all([str(w) for w in spec["name_words"]]))
                if "name_words" in spec
                else (base.name_words if base else frozenset(stem_all(_name_words(name))[1:]))
            ),
        )

    def contracts(self, tools: Iterable[ToolDefinition | Mapping[str, Any]]) -> dict[str, Contract]:
        """Contracts for ``tools`` (missing ones left out: the gate blocks them)."""
        out: dict[str, Contract] = {}
        for t in tools:
            d = ToolDefinition.parse(t)
            c = self.contract_for(d)
            if c is not None:
                out[d.name] = c
        return out

    def with_overrides(self, tools: Mapping[str, Mapping[str, Any]]) -> ContractSet:
        clone = ContractSet.__new__(ContractSet)
        clone.__dict__.update(self.__dict__)
        clone._explicit = {**self._explicit, **tools}
        clone._where = "overrides"  # an error names where the bad definition came from
        for name, spec in tools.items():
            clone._validate(name, spec)
        return clone
