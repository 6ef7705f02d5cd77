"""The home folder and its ``intently.toml``.

A home is a ``.intently/`` folder, found upward from the working directory like git finds
``.git``, or named by ``--home`` / ``INTENTLY_HOME``. Tracked files (config, requirement
files, public keys, the witnessed checkpoint) live beside ignored runtime state (database,
indexes, private keys), and the generated ``.gitignore`` keeps the two apart.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import tomllib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from .errors import InvalidInput, NotFound
from .homedir import CONFIG_FILE, HOME_DIRNAME, locate_home
from .namespaces import namespace_problem

if TYPE_CHECKING:
    from pydantic import TypeAdapter

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

# The sections are standard dataclasses whose annotations pydantic validates (a key is a typed
# field with its default; a bound or a check rides in ``Annotated``), so a new key needs no rule
# of its own. Defining them costs no pydantic import: every hook process (one per tool call)
# opens the home, and importing pydantic and building its validators cost more than the gate's
# decision. So pydantic checks a text once, and the checked values are kept in the home's state
# under a digest of that text and of this code (:func:`_checked`); a hook process reads them
# back and imports pydantic only when the file (or intently) changed.


class _AtLeast:
    """``value >= minimum``, as pydantic's own ``ge`` (and its words) when pydantic validates."""

    def __init__(self, minimum: int) -> None:
        self.minimum = minimum

    def __get_pydantic_core_schema__(self, source: Any, handler: Callable[[Any], Any]) -> Any:
        schema = handler(source)
        schema["ge"] = self.minimum
        return schema


class _After:
    """A check run after the type's (its ``ValueError`` becomes pydantic's ``Value error, ...``)."""

    def __init__(self, check: Callable[[Any], Any]) -> None:
        self.check = check

    def __get_pydantic_core_schema__(self, source: Any, handler: Callable[[Any], Any]) -> Any:
        from pydantic_core import core_schema

        return core_schema.no_info_after_validator_function(self.check, handler(source))


def _namespace(value: str) -> str:
    """Checked here, not where the runtime first uses it, so the error names intently.toml's line."""
    problem = namespace_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


def _key(default: Any, description: str = "") -> Any:
    """A key's default (and the description docs/configuration.md gives)."""
    return field(default=default, metadata={"description": description})


# Unknown keys are errors, not silently ignored (pydantic reads this on standard dataclasses).
_STRICT_KEYS = {"extra": "forbid"}
Namespace = Annotated[str, _After(_namespace)]


@dataclass
class HomeSection:
    __pydantic_config__ = _STRICT_KEYS
    name: Namespace = field(metadata={"description": "Default namespace for objects created in this home."})
    owner: str = field(metadata={"description": "The actor who ran `intently init`; holds every permission."})
    origin: str = _key("", "Origin line of signed checkpoints (defaults to intently/<name>).")


@dataclass
class StoreSection:
    __pydantic_config__ = _STRICT_KEYS
    url: str = _key("", "Database URL; empty means state/intently.db in the home.")
    auto_upgrade: bool = _key(True, "Apply pending schema upgrades when the store opens.")


@dataclass
class LogSection:
    __pydantic_config__ = _STRICT_KEYS
    group_commit: bool = _key(False, "Batch fsyncs (synchronous=NORMAL) for speed.")


@dataclass
class ContextSection:
    __pydantic_config__ = _STRICT_KEYS
    budget: Annotated[int, _AtLeast(200)] = _key(4000, "Token budget of the whole context block.")


@dataclass
class RequirementsSection:
    __pydantic_config__ = _STRICT_KEYS
    inject: Literal["on", "off"] = _key("on", "'off' opts the whole project out.")
    budget: Annotated[int, _AtLeast(50)] = _key(2000)
    transcripts: str = _key("", "Folder of transcripts a scan may mine.")
    scanned: Literal["proposed", "active"] = _key(
        "proposed", "Status of a rule a scan creates: 'proposed' waits for review; 'active' is injected at once."
    )


@dataclass
class EmbedSection:
    __pydantic_config__ = _STRICT_KEYS
    model: Literal["minilm", "wordllama", "hashing", "none"] = _key(
        "minilm", "Local embedding model every engine ranks with; 'none' = lexical only."
    )


@dataclass
class GoalsSection:
    __pydantic_config__ = _STRICT_KEYS
    semantic: bool = _key(False, "Also match MEDIUM goals to a query by meaning (embedder).")


@dataclass
class TriggersSection:
    __pydantic_config__ = _STRICT_KEYS
    max_shown: Annotated[int, _AtLeast(1)] = _key(3)
    max_chars: Annotated[int, _AtLeast(100)] = _key(1200)


@dataclass
class ReviewSection:
    __pydantic_config__ = _STRICT_KEYS
    agents_may_review: bool = _key(
        False, "Let agents (MCP, agent tokens) confirm, dismiss and edit candidates awaiting review."
    )


@dataclass
class LLMSection:
    __pydantic_config__ = _STRICT_KEYS
    base_url: str = _key("", "OpenAI-compatible endpoint for optional proposers.")
    model: str = _key("")
    api_key_env: str = _key("INTENTLY_LLM_KEY", "Environment variable holding the key.")


#: The tables of :class:`Config`, in the order they are checked (and their section types).
_TABLES: dict[str, type] = {
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

    __pydantic_config__ = _STRICT_KEYS
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


#: In the home's ``state/``: the values of the ``intently.toml`` text pydantic last checked.
CHECKED_CONFIG = "config-checked.json"


class _Bad(ValueError):
    """One problem of ``intently.toml``: the dotted field and what is wrong there."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message


@functools.cache
def _adapter() -> TypeAdapter[Config]:
    """Pydantic's validator of :class:`Config`, built on the first text not checked before."""
    from pydantic import TypeAdapter

    return TypeAdapter(Config)


def _validate(raw: dict[str, Any]) -> Config:
    """The config of ``raw`` (the known tables); the first problem raises :class:`_Bad`."""
    from pydantic import ValidationError

    try:
        return _adapter().validate_python(raw)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        place = ".".join(str(part) for part in first["loc"])
        table = str(first["loc"][0])
        if first["type"] == "unexpected_keyword_argument" and table in _TABLES:
            # pydantic's words for a standard dataclass; said as the engine tables say it
            known = ", ".join(f.name for f in fields(_TABLES[table]))
            raise _Bad(place, f"unknown key (known: {known})") from None
        if first["type"] == "dataclass_type":
            raise _Bad(place, "must be a table") from None
        raise _Bad(place, first["msg"]) from None


@functools.cache
def _code_digest() -> bytes:
    """What the checked values depend on besides the text: the rules here and the namespace
    rule (another intently reads the same text differently, so it checks it again)."""
    digest = hashlib.sha256()
    for module in (__file__, namespace_problem.__code__.co_filename):
        digest.update(Path(module).read_bytes())
    return digest.digest()


def _checked(text: str, raw: dict[str, Any], cache: Path) -> Config:
    """The config of ``raw`` (parsed from ``text``): the values pydantic gave for this very
    text before, if ``cache`` holds them, else validated now and kept there for the next process.

    The cache is keyed by a digest of the text and of this code, so an edit to the file (or an
    upgrade of intently) is always checked again; a cache that cannot be read, or does not fit,
    is checked again too, and one that cannot be written only costs the next process the check.
    """
    try:
        key = hashlib.sha256(_code_digest() + text.encode("utf-8")).hexdigest()
    except OSError:  # the code is not on disk (a zip import): check every time
        return _validate(raw)
    try:
        kept = json.loads(cache.read_bytes())
        if kept["key"] == key:
            return Config(**{t: _TABLES[t](**kept["tables"][t]) for t in _TABLES})
    except (OSError, ValueError, KeyError, TypeError):
        pass
    config = _validate(raw)
    try:
        from .files import atomic_write

        tables = {t: asdict(getattr(config, t)) for t in _TABLES}
        atomic_write(cache, json.dumps({"key": key, "tables": tables}), durable=False)
    except OSError:
        pass
    return config


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
            config = _checked(text, raw, self.state_dir / CHECKED_CONFIG)
        except _Bad as exc:
            table, _, key = exc.field.partition(".")
            raise InvalidInput(exc.message, where=f"{self._where(text, table, key)}: {exc.field}") from exc
        config.extra = extra
        return config

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
