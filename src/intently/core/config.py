"""The home folder and its ``intently.toml``.

A home is a ``.intently/`` folder, found upward from the working directory like git finds
``.git``, or named by ``--home`` / ``INTENTLY_HOME``. Tracked files (config, requirement
files, public keys, the witnessed checkpoint) live beside ignored runtime state (database,
indexes, private keys), and the generated ``.gitignore`` keeps the two apart.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

from .errors import InvalidInput, NotFound
from .homedir import CONFIG_FILE, HOME_DIRNAME, locate_home
from .namespaces import namespace_problem

__all__ = ["HOME_DIRNAME", "Config", "Home", "find_home"]

# Tables an engine validates itself (read from ``Config.extra``); any other unknown table is an
# error. Their keys are listed here so a typo is refused when the home opens, by every command,
# not only by the one that reads the table (the engines check the values when they use them).
ENGINE_TABLE_KEYS: dict[str, tuple[str, ...]] = {
    "extract": (
        "extractor",
        "model",
        "agent_channels",
        "dialogue_channels",
        "model_thresholds",
        "timeout",
        "answer_window_turns",
        "answer_window_minutes",
    ),
    "hooks": (
        "shell_allowlist",
        "shell_trusted",
        "web_trusted",
        "extract_tool_output",
        "skip_prompt_when_allowed",
        "server",
    ),
}
ENGINE_TABLES = tuple(ENGINE_TABLE_KEYS)


class _Bad(ValueError):
    """One problem of ``intently.toml``: the dotted field and what is wrong there."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message


# The sections are plain dataclasses checked by the few rules below, not pydantic models: every
# hook process (one per tool call) opens the home, and building pydantic's validators cost it
# more than the gate's decision. The messages are pydantic's words, as before.
_TRUE = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE = frozenset({"0", "off", "f", "false", "n", "no"})
Check = Callable[[object], object]


def _text(value: object) -> object:
    if not isinstance(value, str):
        raise ValueError("Input should be a valid string")
    return value


def _flag(value: object) -> object:
    """A boolean, or what pydantic's lax mode took for one (``1``, ``"yes"``, ``"off"``...)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    if isinstance(value, str | int | float):
        raise ValueError("Input should be a valid boolean, unable to interpret input")
    raise ValueError("Input should be a valid boolean")


def _count(minimum: int) -> Check:
    def check(value: object) -> object:
        if isinstance(value, str):
            if not re.fullmatch(r"\s*[+-]?\d+\s*", value):
                raise ValueError("Input should be a valid integer, unable to parse string as an integer")
            value = int(value)
        elif isinstance(value, float) and value.is_integer():
            value = int(value)
        elif isinstance(value, float):
            raise ValueError("Input should be a valid integer, got a number with a fractional part")
        if not isinstance(value, int) or isinstance(value, bool):
            raise ValueError("Input should be a valid integer")
        if value < minimum:
            raise ValueError(f"Input should be greater than or equal to {minimum}")
        return value

    return check


def _one_of(*choices: str) -> Check:
    said = ", ".join(repr(c) for c in choices[:-1]) + f" or {choices[-1]!r}"

    def check(value: object) -> object:
        if value not in choices:
            raise ValueError(f"Input should be {said}")
        return value

    return check


def _namespace(value: object) -> object:
    """Checked here, not where the runtime first uses it, so the error names intently.toml's line."""
    name = _text(value)
    problem = namespace_problem(str(name))
    if problem is not None:
        raise ValueError(f"Value error, {problem}")
    return name


def _rule(check: Check, description: str = "", **kw: Any) -> Any:
    """A dataclass field with its check (and the description docs/configuration.md gives)."""
    return field(metadata={"check": check, "description": description}, **kw)


class _Section:
    """Validation shared by the tables: known keys only, each through its check."""

    @classmethod
    def from_table(cls, raw: object, where: str) -> Any:
        if not isinstance(raw, dict):
            raise _Bad(where, "Input should be a valid dictionary")
        values: dict[str, object] = {}
        for f in fields(cls):  # type: ignore[arg-type]  # every subclass is a dataclass
            if f.name in raw:
                try:
                    values[f.name] = f.metadata["check"](raw[f.name])
                except ValueError as exc:
                    raise _Bad(f"{where}.{f.name}", str(exc)) from None
            elif f.default is MISSING and f.default_factory is MISSING:
                raise _Bad(f"{where}.{f.name}", "Field required")
        known = {f.name for f in fields(cls)}  # type: ignore[arg-type]
        for key in raw:
            if key not in known:
                raise _Bad(f"{where}.{key}", "Extra inputs are not permitted")
        return cls(**values)


@dataclass
class HomeSection(_Section):
    name: str = _rule(_namespace, "Default namespace for objects created in this home.")
    owner: str = _rule(_text, "The actor who ran `intently init`; holds every permission.")
    origin: str = _rule(_text, "Origin line of signed checkpoints (defaults to intently/<name>).", default="")


@dataclass
class StoreSection(_Section):
    url: str = _rule(_text, "Database URL; empty means state/intently.db in the home.", default="")
    auto_upgrade: bool = _rule(_flag, "Apply pending schema upgrades when the store opens.", default=True)


@dataclass
class LogSection(_Section):
    group_commit: bool = _rule(_flag, "Batch fsyncs (synchronous=NORMAL) for speed.", default=False)


@dataclass
class ContextSection(_Section):
    budget: int = _rule(_count(200), "Token budget of the whole context block.", default=4000)


@dataclass
class RequirementsSection(_Section):
    inject: Literal["on", "off"] = _rule(_one_of("on", "off"), "'off' opts the whole project out.", default="on")
    budget: int = _rule(_count(50), default=2000)
    transcripts: str = _rule(_text, "Folder of transcripts a scan may mine.", default="")
    scanned: Literal["proposed", "active"] = _rule(
        _one_of("proposed", "active"),
        "Status of a rule a scan creates: 'proposed' waits for review; 'active' is injected at once.",
        default="proposed",
    )


@dataclass
class EmbedSection(_Section):
    model: Literal["minilm", "wordllama", "hashing", "none"] = _rule(
        _one_of("minilm", "wordllama", "hashing", "none"),
        "Local embedding model every engine ranks with; 'none' = lexical only.",
        default="minilm",
    )


@dataclass
class GoalsSection(_Section):
    semantic: bool = _rule(_flag, "Also match MEDIUM goals to a query by meaning (embedder).", default=False)


@dataclass
class TriggersSection(_Section):
    max_shown: int = _rule(_count(1), default=3)
    max_chars: int = _rule(_count(100), default=1200)


@dataclass
class ReviewSection(_Section):
    agents_may_review: bool = _rule(
        _flag, "Let agents (MCP, agent tokens) confirm, dismiss and edit candidates awaiting review.", default=False
    )


@dataclass
class LLMSection(_Section):
    base_url: str = _rule(_text, "OpenAI-compatible endpoint for optional proposers.", default="")
    model: str = _rule(_text, default="")
    api_key_env: str = _rule(_text, "Environment variable holding the key.", default="INTENTLY_LLM_KEY")


#: The tables of :class:`Config`, in the order they are checked (and their section types).
_TABLES: dict[str, type[_Section]] = {
    "home": HomeSection,
    "store": StoreSection,
    "log": LogSection,
    "context": ContextSection,
    "requirements": RequirementsSection,
    "triggers": TriggersSection,
    "embed": EmbedSection,
    "goals": GoalsSection,
    "review": ReviewSection,
    "llm": LLMSection,
}


@dataclass
class Config:
    """Validated ``intently.toml``. Unknown keys are errors, not silently ignored."""

    home: HomeSection
    store: StoreSection = field(default_factory=StoreSection)
    log: LogSection = field(default_factory=LogSection)
    context: ContextSection = field(default_factory=ContextSection)
    requirements: RequirementsSection = field(default_factory=RequirementsSection)
    triggers: TriggersSection = field(default_factory=TriggersSection)
    embed: EmbedSection = field(default_factory=EmbedSection)
    goals: GoalsSection = field(default_factory=GoalsSection)
    review: ReviewSection = field(default_factory=ReviewSection)
    llm: LLMSection = field(default_factory=LLMSection)
    #: Engine-specific tables (:data:`ENGINE_TABLES`), checked by their engines.
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_tables(cls, raw: dict[str, Any], extra: dict[str, Any]) -> Config:
        """The config of ``raw`` (the known tables); the first problem raises :class:`_Bad`."""
        if "home" not in raw:
            raise _Bad("home", "Field required")
        return cls(**{t: section.from_table(raw[t], t) for t, section in _TABLES.items() if t in raw}, extra=extra)


CONFIG_TEMPLATE = """\
# intently home configuration. Every key is documented in docs/configuration.md.

[home]
# Default namespace for objects created in this home.
name = "{name}"
# The actor who ran `intently init`; holds every permission in every namespace.
owner = "{owner}"
# Origin line written into signed log checkpoints.
origin = "{origin}"

[store]
# Empty: one SQLite file at .intently/state/intently.db. Or postgresql://user@host/db
url = ""
auto_upgrade = true

[log]
# true trades a sync per operation for batched syncs (faster, a crash may lose the last ms).
group_commit = false

[context]
# Token budget of the whole block an agent is given before a model call.
budget = 4000

[requirements]
# "off" opts the project out of injection and transcript mining.
inject = "on"
budget = 2000
transcripts = ""
# What a scan finds waits for review ("proposed", never injected) until `intently req accept`;
# "active" injects it at once.
scanned = "proposed"

[triggers]
# The hidden standing_intents block: at most this many reminders and characters per turn.
max_shown = 3
max_chars = 1200

[embed]
# Local, offline embedding model that ranks candidates (never decides): minilm, wordllama, hashing, none.
model = "minilm"

[goals]
# Also match MEDIUM goals to the query by meaning, using [embed] model.
semantic = false

[review]
# Confirming, dismissing and editing the candidates extraction proposed is a person's act
# (`intently review`). true lets agents (the MCP server, agent tokens) do it too; the log
# still names the agent, and what it confirms keeps its inferred source.
agents_may_review = false

[extract]
# Which extractor `observe` uses: "rules" (deterministic, offline) or "llm" (the [llm] endpoint).
extractor = "rules"
# The rules' statistical recall layer (a small shipped linear model; adds, never removes).
model = true
# Channels whose turns are prompts to a coding agent (`intently hook claude` uses "claude-code"):
# there a question is put to the agent, so only a stated pending decision becomes an open question.
agent_channels = ["agent", "agent_session", "claude-code"]
# Channels of one-to-one conversation between people: a question there is put to the listener,
# who answers it in the next turn, so again only a stated pending decision is an open question.
dialogue_channels = ["casual_dialogue", "dialogue", "dm", "direct_message"]
# The recall layer's bar per type, over the shipped ones (COMMITMENT 0.65, OPEN_QUESTION 0.7,
# DECISION 0.8): raise one to see fewer of its candidates in review, e.g. {{ COMMITMENT = 0.8 }};
# 1.0 turns the layer off for that type.
model_thresholds = {{}}
# Seconds for one call to the [llm] endpoint when extractor = "llm".
timeout = 30.0
# A person's turn that answers an open question awaiting review ("Should we drop Node 18?" /
# "Yes, let's drop it.") notes the answer on it, when the question came from one of the same
# channel's last N turns, said at most M minutes before. The question stays for you to decide.
# 0 turns turns this off.
answer_window_turns = 3
answer_window_minutes = 60.0

[hooks]
# Command prefixes Claude Code's Bash may run, each only after you confirm it; any other
# command, and any with a shell operator (| ; & > $), is denied. For example:
# shell_allowlist = ["pytest", "git status", "git diff", "ruff check"]
shell_allowlist = []
# Command prefixes that run without intently's confirmation (Claude Code's own permission
# settings still apply); the same matching, and never with a shell operator. Keep it to
# commands that cannot do harm whatever their arguments. For example:
# shell_trusted = ["git status", "git diff", "ls"]
shell_trusted = []
# Sites where the agent may open an address it made up for a lookup (WebFetch of the docs it
# knows); a host admits its subdomains. Addresses an instruction gave stay refused. For example:
# web_trusted = ["docs.python.org", "developer.mozilla.org"]
web_trusted = []
# Also propose intents found in tool output (they only wait in `intently review`).
extract_tool_output = false
# false: a call the gate allows is left to Claude Code's own permission settings (intently only
# ever adds a prompt or a refusal). true: the gate's allow skips Claude Code's prompt.
skip_prompt_when_allowed = false
# true: the first hook that finds no `intently hook serve` running starts one in the background
# (output in state/hook-serve.log; it stops after 30 idle minutes); later hooks answer through it.
server = false

[llm]
# Optional OpenAI-compatible endpoint for proposers (extraction, vocabulary). Never decides.
base_url = ""
model = ""
api_key_env = "INTENTLY_LLM_KEY"
"""

# Every clone adds its own line to these two files (its key, its database's checkpoints), each
# line ending in a comma before a fixed closing line; when two clones add theirs at once, a
# union merge keeps both lines and the files stay valid JSON, where a plain merge would stop.
GITATTRIBUTES = """\
checkpoints.json merge=union
keys/public.json merge=union
"""

GITIGNORE = """\
# Runtime state stays out of git; config, requirements, public keys and the
# witnessed checkpoint are tracked so that history witnesses the log.
state/
index/
keys/private/
*.db
*.db-wal
*.db-shm
*.tmp
"""


class Home:
    """A ``.intently/`` folder: where config, keys, tracked files and state live."""

    def __init__(self, path: Path) -> None:
        self.path = path.resolve()

    @property
    def config_path(self) -> Path:
        return self.path / CONFIG_FILE

    @property
    def project_root(self) -> Path:
        return self.path.parent

    @property
    def state_dir(self) -> Path:
        return self.path / "state"

    @property
    def keys_dir(self) -> Path:
        return self.path / "keys"

    @property
    def private_keys_dir(self) -> Path:
        return self.path / "keys" / "private"

    @property
    def witness_path(self) -> Path:
        return self.path / "checkpoints.json"

    @property
    def requirements_dir(self) -> Path:
        return self.path / "requirements"

    @property
    def index_dir(self) -> Path:
        return self.path / "index"

    def exists(self) -> bool:
        return self.config_path.is_file()

    def load_config(self) -> Config:
        """Read and validate ``intently.toml``; errors name the file, line and field."""
        try:
            text = self.config_path.read_text(encoding="utf-8")
            raw = tomllib.loads(text)
        except FileNotFoundError as exc:
            raise NotFound(f"no {CONFIG_FILE} in {self.path}; run `intently init`") from exc
        except NotADirectoryError as exc:  # a file named as the home (``open("/etc/passwd")``)
            raise InvalidInput(
                "is a file (or lies under one), not an intently home folder", where=str(self.path)
            ) from exc
        except OSError as exc:  # unreadable (permissions, a folder named intently.toml): say where
            raise InvalidInput(f"cannot be read: {exc.strerror or exc}", where=str(self.config_path)) from exc
        except tomllib.TOMLDecodeError as exc:
            raise InvalidInput(str(exc), where=str(self.config_path)) from exc
        known = set(_TABLES)
        extra = {k: raw.pop(k) for k in list(raw) if k not in known}
        unknown = sorted(k for k in extra if k not in ENGINE_TABLES)
        if unknown:
            tables = ", ".join(sorted(known | set(ENGINE_TABLES)))
            raise InvalidInput(
                f"unknown table [{unknown[0]}] (known: {tables})",
                where=f"{self._where(text, unknown[0], '')}: {unknown[0]}",
            )
        for table, section in extra.items():
            if not isinstance(section, dict):
                raise InvalidInput("must be a table", where=f"{self.config_path}: {table}")
            typo = sorted(set(section) - set(ENGINE_TABLE_KEYS[table]))
            if typo:
                known_keys = ", ".join(ENGINE_TABLE_KEYS[table])
                raise InvalidInput(
                    f"unknown key (known: {known_keys})",
                    where=f"{self._where(text, table, typo[0])}: {table}.{typo[0]}",
                )
        try:
            return Config.from_tables(raw, extra)
        except _Bad as exc:
            table, _, key = exc.field.partition(".")
            raise InvalidInput(exc.message, where=f"{self._where(text, table, key)}: {exc.field}") from exc

    def _where(self, text: str, table: str, key: str) -> str:
        """``intently.toml:LINE`` for ``key`` in ``[table]`` (the table's header line for a
        missing key), so an error points at the line to fix; the bare path if it is not found."""
        line = config_line(text, table, key.split(".")[0])
        return f"{self.config_path}:{line}" if line else str(self.config_path)

    def database_url(self, config: Config) -> str:
        env = os.environ.get("INTENTLY_DATABASE_URL")
        if env:
            return env
        if config.store.url:
            return config.store.url
        return f"sqlite:///{self.state_dir / 'intently.db'}"

    def ensure_gitattributes(self) -> None:
        """Write ``.gitattributes`` if the home has none (homes made before it existed get it on join)."""
        path = self.path / ".gitattributes"
        if not path.exists():
            path.write_text(GITATTRIBUTES, encoding="utf-8")

    def create(self, *, name: str, owner: str) -> Config:
        """Lay out a new home. Refuses to overwrite an existing one."""
        if self.exists():
            raise InvalidInput(f"a home already exists at {self.path}", where=str(self.config_path))
        for folder in (self.path, self.state_dir, self.private_keys_dir, self.requirements_dir, self.index_dir):
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:  # a file in the way (``init("/etc/passwd")``), no permission
                raise InvalidInput(f"cannot create the folder: {exc.strerror or exc}", where=str(folder)) from exc
        os.chmod(self.private_keys_dir, 0o700)
        origin = f"intently/{name}"
        self.config_path.write_text(CONFIG_TEMPLATE.format(name=name, owner=owner, origin=origin), encoding="utf-8")
        (self.path / ".gitignore").write_text(GITIGNORE, encoding="utf-8")
        self.ensure_gitattributes()
        (self.requirements_dir / ".gitkeep").touch()
        return self.load_config()


_TABLE_HEADER = re.compile(r"^\s*\[\s*([A-Za-z0-9_.-]+)\s*\]\s*(?:#.*)?$")


def config_line(text: str, table: str, key: str) -> int | None:
    """The 1-based line of ``key = ...`` inside ``[table]`` of a TOML text, else the line of the
    ``[table]`` header, else ``None``. Enough for intently.toml's flat tables; it does not parse."""
    current = ""
    header: int | None = None
    assign = re.compile(rf"^\s*{re.escape(key)}\s*=") if key else None
    for number, line in enumerate(text.splitlines(), start=1):
        found = _TABLE_HEADER.match(line)
        if found:
            current = found.group(1)
            if current == table and header is None:
                header = number
            continue
        if current == table and assign is not None and assign.match(line):
            return number
    return header


def find_home(start: Path | None = None, explicit: str | Path | None = None) -> Home:
    """``explicit`` (``--home``), then ``INTENTLY_HOME``, then the nearest ``.intently/`` upward.

    Naming a project folder instead of its ``.intently/`` works too.
    """
    found = locate_home(start, explicit)
    if found is not None:
        return Home(found)
    here = (start or Path.cwd()).resolve()
    raise NotFound(f"no {HOME_DIRNAME}/ found in {here} or above; run `intently init` or pass --home")
