"""Matching without a model: normalisation, phrases, negation, exclusions, synonyms, ranking."""

from __future__ import annotations

from pathlib import Path

import pytest

from intently import Intently
from intently.triggers import Matcher, load_synonyms


def fires(entries: list[list[str]], text: str, **kw: object) -> bool:
    matcher = Matcher()
    matcher.index.upsert(matcher.compile("i1", entries, **kw))  # type: ignore[arg-type]
    return [h.intent.id for h in matcher.match(text)] == ["i1"]


@pytest.mark.parametrize(
    ("trigger", "turn"),
    [
        ("launch", "We are launching on Monday"),
        ("devnet", "both devnets are down"),
        ("Launch", "LAUNCH time"),
        ("café", "meet at the cafe\u0301"),  # decomposed accent meets a composed one
        ("resume", "Résumé review"),
        ("rollback", "we need a roll-back plan"),
        ("rollback", "please roll back the deploy"),
        ("roll-back", "the rollback failed"),
        ("target feature", "the targetFeature attribute"),
        ("behaviour", "undefined behavior here"),
        ("stabilise", "when do we stabilize it"),
        ("rfc", "see the open RFCs"),
        ("rfc", "as a pre-RFC on internals"),
        ("ub", "this is undefined behaviour"),
        ("undefined behaviour", "that is UB at runtime"),
        ("security", "two vulnerabilities were reported"),
        ("ﬁle", "the file is missing"),  # NFKC folds the ligature
        ("発売", "新製品の発売日はいつ"),  # unspaced CJK
        ("1", "moving to stage 1 today"),
        # prose between two inline code spans is prose (a closing backtick opens nothing)
        ("gat", "extend `Iterator` in place with GATs, then `Item` too"),
    ],
)
def test_word_forms_meet(trigger: str, turn: str) -> None:
    assert fires([[trigger]], turn)


@pytest.mark.parametrize(
    ("trigger", "turn"),
    [
        ("launch", "lunch is ready"),
        ("security", "a secret plan"),
        ("vulnerability", "security review tomorrow"),  # broader terms go one way only
        ("edition", "see https://play.rust-lang.org/?edition=2021&mode=debug"),
        ("nightly", "docs at www.example.org/nightly/pin.html"),
        ("panic", "run `let x = panic_handler(); x.call()` first"),
        ("発売日", "発売の日"),
    ],
)
def test_other_words_urls_and_code_do_not_fire(trigger: str, turn: str) -> None:
    assert not fires([[trigger]], turn)


def test_a_code_span_that_names_one_thing_is_a_mention() -> None:
    assert fires([["unsafe"]], "Should we require them to be in `unsafe` blocks?")


def test_unquoted_words_come_up_anywhere_quoted_phrases_must_be_adjacent() -> None:
    assert fires([["release candidate"]], "The candidate release is ready")
    assert not fires([['"release candidate"']], "The candidate release is ready")
    assert fires([['"release candidate"']], "cut the release candidates tonight")
    assert not fires([['"release candidate"']], "the release, candidate two")  # punctuation ends a phrase


def test_every_term_of_an_entry_is_needed_and_entries_are_alternatives() -> None:
    assert not fires([["launch", "checklist"]], "the launch is near")
    assert fires([["launch", "checklist"], ["go live"]], "when do we go live?")


def test_function_words_do_not_block_an_entry() -> None:
    assert fires([["the launch of the checklist"]], "launch checklist attached")


def test_negation_guard_on_by_default_and_off_per_intent() -> None:
    for turn in ("No objections from me", "I did not raise any objections", "we have no further objections"):
        assert not fires([["objections"]], turn), turn
        assert fires([["objections"]], turn, negation_guard=False), turn
    assert not fires([["launch", "checklist"]], "there is no launch checklist yet")


def test_negation_is_local() -> None:
    assert fires([["objections"]], "No, there are objections")  # punctuation ends the negation
    assert fires([["windows"]], "we don't have enough Windows expertise")
    assert fires([["rollback"]], "no rollback plan yet, but rollback came up in review")


def test_exclusion_terms_veto() -> None:
    assert fires([["release"]], "the release is Friday", exclusions=["press release"])
    assert not fires([["release"]], "draft the press release", exclusions=["press release"])


def test_ranking_prefers_more_and_rarer_terms_then_newer() -> None:
    matcher = Matcher()
    matcher.index.upsert(matcher.compile("broad", [["release"]], created_at="2026-01-03T00:00:00.000000Z"))
    matcher.index.upsert(matcher.compile("narrow", [["release", "rollback"]], created_at="2026-01-01T00:00:00.000000Z"))
    matcher.index.upsert(matcher.compile("older", [["release"]], created_at="2026-01-02T00:00:00.000000Z"))
    for i in range(5):  # "deploy" becomes common, "canary" stays rare
        matcher.index.upsert(matcher.compile(f"d{i}", [["deploy"]], created_at="2026-01-01T00:00:00.000000Z"))
    matcher.index.upsert(matcher.compile("rare", [["canary"]], created_at="2026-01-01T00:00:00.000000Z"))
    order = [h.intent.id for h in matcher.match("release rollback canary deploy")]
    assert order[0] == "narrow"
    assert order[1] == "rare"
    assert order.index("broad") < order.index("older")
    assert order.index("older") < order.index("d0")


def test_every_matching_intent_is_found_no_cap() -> None:
    matcher = Matcher()
    for i in range(600):
        matcher.index.upsert(matcher.compile(f"i{i}", [[f"common topic{i % 3}"]]))
    hits = matcher.match("the common topic0 topic1 topic2 thread")
    assert len(hits) == 600


def test_removing_and_replacing_an_intent_updates_matching() -> None:
    matcher = Matcher()
    matcher.index.upsert(matcher.compile("i1", [["launch"]]))
    matcher.index.upsert(matcher.compile("i1", [["rollback"]]))
    assert matcher.match("launch") == []
    assert [h.intent.id for h in matcher.match("rollback")] == ["i1"]
    assert matcher.index.remove("i1")
    assert matcher.match("rollback") == []


def test_a_word_in_every_turn_does_not_change_results() -> None:
    matcher = Matcher()
    for i in range(50):
        matcher.index.upsert(matcher.compile(f"i{i}", [[f"hot w{i}"]]))
    first = {h.intent.id for h in matcher.match("hot w1 w2")}
    for _ in range(300):  # "hot" comes up in every turn
        matcher.match("hot stuff")
    assert {h.intent.id for h in matcher.match("hot w1 w2")} == first == {"i1", "i2"}


def test_home_synonyms_extend_the_shipped_file(tmp_path: Path) -> None:
    (tmp_path / "synonyms.yaml").write_text(
        "equivalents:\n  - [launch checklist, LCL]\nbroader:\n  incident: [sev1, outage]\n", encoding="utf-8"
    )
    matcher = Matcher.for_home(tmp_path)
    matcher.index.upsert(matcher.compile("a", [["launch checklist"]]))
    matcher.index.upsert(matcher.compile("b", [["incident"]]))
    matcher.index.upsert(matcher.compile("c", [["UB"]]))
    assert {h.intent.id for h in matcher.match("LCL is done; we had a SEV1; that is undefined behaviour")} == {
        "a",
        "b",
        "c",
    }


def test_a_bad_synonyms_file_is_reported_by_line_and_the_rest_still_applies(tmp_path: Path) -> None:
    path = tmp_path / "synonyms.yaml"
    path.write_text(
        "equivalents:\n  - [sev1, severity one]\n  - just-a-string\nunknown: 1\nbroader:\n  x: notalist\n",
        encoding="utf-8",
    )
    table = load_synonyms(path)
    problems = "\n".join(table.problems)
    assert f"{path}:3:" in problems  # the bad equivalents entry
    assert f"{path}:4:" in problems  # the unknown section
    assert f"{path}:6:" in problems  # the bad broader value
    matcher = Matcher(table)
    matcher.index.upsert(matcher.compile("a", [["severity one"]]))
    matcher.index.upsert(matcher.compile("b", [["UB"]]))
    assert {h.intent.id for h in matcher.match("sev1 and UB")} == {"a", "b"}


def test_unparsable_synonyms_file_keeps_the_shipped_table(tmp_path: Path) -> None:
    path = tmp_path / "synonyms.yaml"
    path.write_text("equivalents: [unclosed\n", encoding="utf-8")
    table = load_synonyms(path)
    assert any(p.startswith(f"{path}:") and "not valid YAML" in p for p in table.problems)
    matcher = Matcher(table)
    matcher.index.upsert(matcher.compile("b", [["pull request"]]))
    assert [h.intent.id for h in matcher.match("opened a PR")] == ["b"]


@pytest.mark.parametrize(
    ("entry", "turn"),
    [
        (["code freeze"], "the code froze... no: we enter the code freeze Friday"),
        (["freeze"], "deploys are frozen until Monday"),
        (["break"], "the nightly build is broken"),
        (["certificate", "expiry"], "the TLS cert expires on Friday"),
        (["flaky", "test"], "these tests keep flaking"),
        (["breaking", "change"], "the breakage we talked about"),  # an entry typed word by word is a form
        (["rate limit"], "we got rate-limited again"),
    ],
)
def test_inflections_derivations_and_aliases_meet(entry: list[str], turn: str) -> None:
    assert fires([entry], turn)


@pytest.mark.parametrize(
    ("entry", "turn"),
    [
        (["code freeze"], "we don't have a code freeze this cycle"),  # the compound's head is negated
        (["post-mortem"], "no post mortem needed"),
        (["upgrade", "dependency"], "we don't need to upgrade any dependencies"),
        (["rotation"], "the `on_call` handler in rotation.py is deprecated"),  # file names are code
        (["release candidate"], "see `release_candidate()` for how the tag is made"),  # a call is code
        (["security"], "the TLS handshake failed"),  # an alias counts whole, not word by word
        (["request"], "I opened a PR"),
    ],
)
def test_negated_compounds_code_and_partial_aliases_do_not_fire(entry: list[str], turn: str) -> None:
    assert not fires([entry], turn)


def test_a_product_name_with_a_dot_is_still_prose() -> None:
    assert fires([["node"]], "we upgraded Node.js last week")
    assert fires([["rate limits"]], "rate limits are configured in gateway.yaml")


@pytest.mark.parametrize(
    ("trigger", "turn"),
    [
        ("CI/CD", "the CI/CD pipeline is red again"),
        ("Node.js", "we upgraded Node.js last week"),
        ("nodejs", "we upgraded Node.js last week"),
        ("v2.0", "when does v2.0 ship?"),
        ("Python 3.12", "moving the runners to Python 3.12 soon"),
        ("R&D", "the R&D budget is frozen"),
        ("I/O", "disk I/O is the bottleneck"),
        ("C++", "we rewrote the parser in C++"),
        ("C++", "C++20 modules are still rough"),
        ("C#", "the client is written in C#."),
        (".NET", "our .NET services need the patch"),
        ("gitignore", "add it to .gitignore first"),
    ],
)
def test_a_name_with_punctuation_in_it_meets_itself(trigger: str, turn: str) -> None:
    """The '.', '/', '&', '++' or '#' inside a name is part of the word, not a clause break."""
    assert fires([[trigger]], turn)


@pytest.mark.parametrize(
    ("trigger", "turn"),
    [
        ("C++", "plan C is fine"),
        ("C#", "plan C is fine"),
        ("C", "we rewrote the parser in C++"),
        (".NET", "the fishing net is torn"),
        ("R&D", "the 3rd time this week"),  # initials are not glued into one token
        ("Python 3.12", "Python 3 and 12 other tools"),
        ("rfcs", "see issue#12"),
    ],
)
def test_a_name_with_punctuation_is_not_its_bare_word(trigger: str, turn: str) -> None:
    assert not fires([[trigger]], turn)


@pytest.mark.parametrize(
    ("trigger", "turn"),
    [
        ("oncall", "who is on call this week?"),
        ("on call", "who is oncall this week?"),
        ("on-call", "who is on call this week?"),
        ("database", "the data base is slow"),
        ("data base", "the databases are slow"),
        ("timezone", "which time zone is that?"),
        ("time zone", "the timezones are wrong"),
        ("codebase", "the code base is old"),
        ("code base", "the codebase is old"),
        ("roll back", "we will rollback"),
        ("rollback", "we will roll back"),
    ],
)
def test_two_words_meet_their_one_word_form_when_stemming_changes_it(trigger: str, turn: str) -> None:
    """The joined form is stemmed whole, as the one-word form is ("oncall" -> "oncal")."""
    assert fires([[trigger]], turn)


@pytest.mark.parametrize(
    ("trigger", "turn"),
    [
        ("HTTP", "we moved to HTTPS"),
        ("HTTPS", "we are still on HTTP"),
        ("GCS", "long GC pauses"),
        ("DNS", "the DN field is empty"),
        ("dns", "the DN field is empty"),
        ("AWS", "aw, that is a shame"),
        ("aws", "aw, that is a shame"),
        ("SMS", "the SM module"),
    ],
)
def test_an_acronym_ending_in_s_is_its_own_word(trigger: str, turn: str) -> None:
    assert not fires([[trigger]], turn)


@pytest.mark.parametrize(
    ("trigger", "turn"),
    [
        ("PR", "two PRs landed"),
        ("API", "the public APIs"),
        ("RFC", "see the open RFCs"),
        ("rfc", "see rust-lang/rfcs#2396"),  # lower case: case cannot tell, a turn's plural counts
        ("PR", "merged two prs"),
        ("HTTPS", "we moved to https"),
        ("AWS", "we are on aws"),
        ("aws", "we are on AWS"),
        ("DNS", "a DNS outage"),
    ],
)
def test_plural_acronyms_meet_their_singular_and_acronyms_meet_across_case(trigger: str, turn: str) -> None:
    assert fires([[trigger]], turn)


@pytest.mark.parametrize(
    ("trigger", "turn"),
    [
        ("1:1", "can we move our 1:1 to Thursday?"),
        ("std::vector", "swap the std::vector for a deque"),
        ("user@example.com", "mail user@example.com about it"),
        ("key=value", "the config line key=value is wrong"),
        ("v1->v2", "the v1->v2 migration"),
        ('"deploy, then"', "deploy, then announce"),
    ],
)
def test_a_trigger_with_a_clause_break_inside_fires_on_its_own_text(ix: Intently, trigger: str, turn: str) -> None:
    """A turn ends a clause at ":", "@", "=", ",", so these words are never adjacent in it.
    Taken as one phrase, such a trigger was stored, listed, and never fired, not even on a
    turn that quotes it verbatim; each part is now a term of its own, all of which must come up."""
    intent = ix.triggers.add("Check it", when=trigger)
    assert [h.id for h in ix.triggers.match(turn).hits if h.fired] == [intent.id]
    assert ix.triggers.show(intent.id).fire_count == 1
    assert not [h for h in ix.triggers.test("nothing related here").hits]


def test_the_parts_of_a_trigger_cut_at_a_clause_break_must_all_come_up(ix: Intently) -> None:
    intent = ix.triggers.add("Check the allocator", when="std::vector", cooldown=0)
    assert ix.triggers.test("a vector of floats").hits == ()  # one part is not the trigger
    assert [h.id for h in ix.triggers.test("the vector type from std").shown] == [intent.id]


def test_a_synonym_key_given_twice_is_reported_at_its_line_not_the_last_one_kept(tmp_path: Path) -> None:
    """A good file is read by libyaml, which keeps a repeated key's last value without a word;
    the reading refuses it as ruamel.yaml does, and says where."""
    path = tmp_path / "synonyms.yaml"
    path.write_text("broader:\n  vcs: [git]\n  vcs: [svn]\n", encoding="utf-8")
    table = load_synonyms(path, shipped=False)
    assert [p for p in table.problems if "not valid YAML" in p and p.startswith(f"{path}:3:")], table.problems
    assert table.sources == []


@pytest.mark.parametrize(
    "text",
    [
        "equivalents:\n  - [on call, pager duty]\n  - [no-op, noop]\n  - [404, not found]\nbroader:\n  vcs: [git, svn]\n",
        "equivalents:\n  - [yes, okay]\n  - [010, ten]\n  - [1_000, thousand]\nbroader: {}\n",
        "# nothing yet\n",
        "",
    ],
)
def test_a_good_synonyms_file_reads_as_ruamel_reads_it(tmp_path: Path, text: str) -> None:
    """The fast reading (libyaml, YAML 1.2 scalars) gives the table ruamel.yaml's reading gives:
    ``on``, ``no`` and ``yes`` stay words, ``010`` is ten, ``1_000`` a thousand."""
    from intently.triggers import _synonyms

    path = tmp_path / "synonyms.yaml"
    path.write_text(text, encoding="utf-8")
    fast = load_synonyms(path)
    careful = load_synonyms(None)
    _synonyms._read_with_lines(careful, path, text)
    assert fast.problems == careful.problems == []
    assert fast.sources == careful.sources
    assert (fast.canonical, fast.broader, fast.broad_terms) == (careful.canonical, careful.broader, careful.broad_terms)


def test_the_shipped_synonyms_read_as_ruamel_reads_them() -> None:
    from intently.triggers import _synonyms

    path = _synonyms.shipped_synonyms_path()
    fast = load_synonyms(None)
    careful = _synonyms.SynonymTable()
    _synonyms._read_with_lines(careful, path, path.read_text(encoding="utf-8"))
    assert fast.problems == careful.problems == []
    assert (fast.canonical, fast.broader, fast.broad_terms) == (careful.canonical, careful.broader, careful.broad_terms)
