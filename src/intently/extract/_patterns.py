"""The sentence patterns the rule extractor reads: compiled once, on first use, named for what they find.

Word lists live in ``lexicon.toml``; these are the shapes around them (who is the subject,
where a clause or a label starts, what a condition or a question looks like). Keeping them
apart from ``_rules.py`` leaves that module to the decisions.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator


class LazyPattern:
    """A regular expression compiled on its first use, not when this module loads.

    A hook process reads one prompt and so exercises a few of these shapes (many are for meeting
    minutes or chat only); compiling all of them at import cost every prompt's process tens of
    milliseconds. Only the methods the rules call are offered, with ``re.Pattern``'s meaning.
    """

    __slots__ = ("_compiled", "_flags", "pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> bool:
        """Whether the pattern has been compiled yet (for the start-up tests)."""
        return self._compiled is not None

    @property
    def regex(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self._flags)
        return self._compiled

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.regex.search(string, pos, endpos)

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.regex.match(string, pos, endpos)

    def finditer(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match[str]]:
        return self.regex.finditer(string, pos, endpos)


ADVERB = (
    r"(?:also|just|then|definitely|certainly|surely|now|still|actually|really|gladly|happily|personally|both|all"
    r"|actively|strongly|truly|genuinely|absolutely)"
)
WORD = r"[a-z][\w'-]*"
NAME = r"(?:@[\w.-]+|[A-Z][\w'.-]*(?:\s+[A-Z][\w'-]*)?)"
OWNER_LIST = rf"(?P<owner>{NAME}(?:\s*(?:/|,|and|&)\s*{NAME})*)"
NOBODY = {"", "-", "?", "unknown", "none"}
# A condition after the verb ("if", "unless"), but not "see if" / "ask if", where "if" means whether.
# Minutes name people by their lower-case handles ("pnkfelix to review the PR", "nikomatsakis will
# update the doc"): a single lower-case token opening the line, before "to"/"will" and a task verb.
HANDLE_ACTION = LazyPattern(
    r"(?P<owner>[a-z][a-z0-9_-]{2,})\s+(?P<mod>to|will|needs to|has to|is going to)\s+(?P<verb>[a-z][\w-]*)"
)
# "he will comment on the issue" in minutes: a pronoun standing for the person just named. Only
# before a task verb, and owned by nobody in particular (the pronoun names no one by itself).
PRONOUN_ACTION = LazyPattern(
    r"(?:^|(?<=[,;:]\s)|(?<=\band\s))(?P<owner>he|she)\s+(?P<mod>will|'ll|is going to)\s+(?P<verb>[a-z][\w-]*)",
    re.IGNORECASE,
)
# A planned action in the present progressive, placed in the future by a time expression:
# "Hank and I are leaving tonight", "we're shipping it next week". Verbs of mind, motion
# towards a plan, or waiting are states or other constructions, not the act itself.
PROGRESSIVE_PLAN = LazyPattern(
    r"(?<!\w)(?P<subj>i|we)\s*(?:am|'m|are|'re)\s+(?:also\s+|just\s+|still\s+)?(?P<verb>[a-z]+ing)\b", re.IGNORECASE
)
# Minutes drop the subject: "getting the new version of readable-stream out later this week".
SUBJECTLESS_PROGRESSIVE = LazyPattern(r"(?P<subj>)(?P<verb>[a-z]+ing)\b", re.IGNORECASE)
# Desirability after its subject: "for devnet-8, rpc-compat progress would be great". Not the
# reply "that would be great", which accepts an offer made in the conversation.
POSTPOSED_DESIRABLE = LazyPattern(
    r"\b(?!(?:that|this|it|which|there|what|you|he|she|they)\b)[a-z][\w-]*\s+(?:would|'d)\s+be\s+"
    r"(?:great|nice|ideal)\b"
)
PROGRESSIVE_NOT_PLANS = frozenset(
    {
        "going",
        "trying",
        "hoping",
        "planning",
        "thinking",
        "wondering",
        "looking",
        "feeling",
        "having",
        "being",
        "saying",
        "asking",
        "wanting",
        "waiting",
        "worrying",
        "expecting",
        "hearing",
        "seeing",
        "talking",
        "kidding",
        "continuing",
        "joking",
        "doing",
        "working",
        "living",
        "staying",
        "considering",
        "proposing",
        "suggesting",
        "arguing",
        "assuming",
        "aiming",
        "willing",
        "missing",
        "losing",
        "running",
        "using",
        "supposing",
    }
)
# "see if", "ask whether": "if" introduces what is to be found out, not a condition.
WHETHER_IF = LazyPattern(r"\b(?:see|check|ask|know|find out|wonder|confirm|verify|tell|gauge)\s+if$")
POSTPOSED_CONDITION = LazyPattern(
    r"(?<!\bsee )(?<!\bcheck )(?<!\bask )(?<!\bknow )(?<!\bout )(?<!\bwonder )(?<!\bconfirm )(?<!\bverify )"
    r"(?<!\btell )(?<!\bsee, )\b(?:if|unless)\b"
)
# A deliberation verb taking an indirect question: "figure out what is being proposed",
# "decide first if we want to enshrine it". The choice is still to be made.
DELIBERATION = LazyPattern(
    r"\b(?:figure out|work out|find out|decide|determine|settle|resolve)\s+(?:(?:first|now|later|still|exactly|precisely)\s+)?"
    r"(?:whether|what|which|how|when|who|if)\b"
)
# "post warnings on older MCPs that we will close if we can't find a liaison": the condition
# belongs to the relative clause, not to the undertaking.
RELATIVE_CLAUSE = LazyPattern(r"\b(?:that|which|who)\s+[a-z]+\s+(?:will|would|can|could|may|might|should|must|'ll)\b")
# Volunteering in a meeting is an undertaking even with no task named: "I volunteer", "JMN has
# volunteered", "I want to volunteer as a reviewer". ("volunteered to <task>" is a commissive.)
VOLUNTEERS = LazyPattern(
    r"(?:^|(?<=[,;:.!]\s)|(?<=\band\s)|(?<=\bthat\s)|(?<=\bso\s))(?P<owner>[A-Z][\w'.-]*|@[\w.-]+)"
    r"(?:\s+(?:have|has|had|just|also|already|hereby|really))*"
    r"(?:\s+(?:want|wanted|would like|'d like|am happy|'m happy|am glad|'m glad|offer)\s+to)?"
    r"\s+volunteer(?:s|ed)?\b(?!\s+to\b)"
)
# A named person's desire in minutes: "Niko would like to stabilize the macro".
NAMED_DESIRE = LazyPattern(
    r"(?:^|(?<=[,;:]\s))(?P<owner>[A-Z][\w'-]*)\s+(?:would like to|'d like to|wants to|hopes to|would love to)\s+"
    r"(?P<verb>[a-z][\w-]*)"
)
# "whether the support should be in the first version": a choice still to be made, in a declarative.
WHETHER_SHOULD = LazyPattern(r"\bwhether\b(?=[^.?!]{0,100}?\b(?:should|ought to|needs? to|must)\b)")
# "a more general conversation needed", "needs more discussion", "the actual question is when".
NEEDS_DISCUSSION = LazyPattern(
    r"\bneeds?\s+(?:a\s+|an\s+|more\s+|some\s+|further\s+)?(?:[a-z]+\s+){0,2}?(?:conversation|discussion)\b"
    r"|\b(?:conversation|discussion)\s+(?:is\s+)?needed\b"
    r"|\b(?:the\s+(?:[a-z]+\s+)?|(?:remaining|open|main|key|outstanding|next|final)\s+)question\s+(?:is|remains)\b"
)
# A question whose subject is the speaker alone asks the listener for leave or help ("can I pay
# by check?", "is there any way I could use it today?"): the listener answers it at once.
FIRST_SINGULAR_QUESTION = LazyPattern(
    r"\b(?:can|could|may|might|shall|should)\s+i\b|\bi\s+(?:could|can|may|might)\b|^(?:how|what)\s+about\s+(?:my|your)\b"
)
# Minutes often drop the question mark: "Should Node.js try to be ... or ..." is still a question.
BARE_QUESTION = LazyPattern(
    r"^(?:(?i:should|shall)\s+(?:we|it|they|this|that|these|those|the|[A-Z][\w.-]*)\b"
    r"|(?i:would|does|do)\s+it\s+make\s+sense\b)"
)
# Impersonal desirability without its dummy subject, as chats write it: "Would also be nice to
# see what tooling breaks", "Would be good if we can take these actions in under a week".
SUBJECTLESS_DESIRABLE = LazyPattern(
    r"(?:(?:it|that)\s+)?(?:would|'d)\s+(?:also\s+|really\s+)?be\s+(?:nice|great|good|ideal|helpful)\s+(?=to\b|if\b|for\b)"
)
# A goal stated as a noun with its own adjuncts: "our goal this sprint is to cut p99", "the main
# objective of the refactor is that sessions resume". The fixed phrases in the lexicon ("our goal is")
# miss every such phrase with words between the noun and the verb. Present or future only: "the goal
# was" reports, "the goal is not to" denies.
GOAL_STATEMENT = LazyPattern(
    r"\b(?:our|my|the|their|this|the team's|the project's)\s+"
    r"(?:(?:main|primary|top|first|biggest|real|overall|ultimate|long-term|short-term|immediate|key|end|one)\s+)?"
    r"(?:goal|aim|objective|target|priority|mission|intention)\s+"
    r"(?:(?:for|of|in|with|on|this|next|today|here|now|going)\b[^.;:!?]{0,40}?\s+)?"
    r"(?:is|are|will be|remains|should be)\s+(?=to\b|that\b|:|[a-z]+ing\b)"
)
# The speaker asks to be reminded: the task is theirs to do later ("remind me to rotate the keys next
# week", "don't let me forget to update the changelog").
REMIND_ME = LazyPattern(
    r"(?:please\s+|pls\s+|and\s+|also\s+)?(?:remind\s+me|do\s+not\s+let\s+me\s+forget|don't\s+let\s+me\s+forget"
    r"|dont\s+let\s+me\s+forget)\s+(?:later\s+|tomorrow\s+)?(?:to|that\s+i\s+(?:need|have)\s+to)\s+(?P<verb>[a-z][\w-]*)",
    re.IGNORECASE,
)
# A worry announced by its noun, as notes and chats write it: "One concern: the cache could serve stale
# prices", "the main risk here is the migration", "another worry would be the API limits".
RISK_OPENER = LazyPattern(
    r"(?:^|(?<=[,;]\s))(?:(?:one|a|another|my|the|our|main|big|biggest|key|potential|possible|only|real|slight)\s+){0,2}"
    r"(?:concern|risk|worry|danger|downside|caveat)s?(?:\s+(?:here|with\s+(?:this|that|it)))?\s*(?::|\bis\b|\bwould\s+be\b)"
)
# A choice settled by an imperative, alone or after an assent: "OK, go with the second approach",
# "let's stick with SQLite". A person after "with" is company, not a choice ("go with him").
CHOICE_IMPERATIVE = LazyPattern(
    r"(?:(?:ok|okay|alright|all right|yes|yeah|yep|sure|sounds good|great|fine|agreed|perfect)[,.!]?\s+)?"
    r"(?:then\s+)?(?:let's\s+|lets\s+|we'll\s+|we\s+will\s+)?(?:go|stick|proceed)\s+with\s+"
    r"(?!(?:me|you|him|her|us|them|my|your|his|their)\b)"
)
# In a prompt to a coding agent, the user choosing the means: "let's use python instead of bash",
# "use @clack/prompts instead of bun-promptx", "lets continue using bash", "I want to use langgraph",
# also as a later clause ("for the name, lets use org/project", "don't use redux, use context instead of it").
# There the user directs the work, so a stated choice of tool or approach is a decision. Only
# "use ... instead of" and first-person choice verbs count: a bare "instead of" mostly describes
# how a requested change should behave ("make them multiline instead of one line").
AGENT_CHOICE = LazyPattern(
    r"(?:^|(?<=[,;:]\s)|(?<=\band\s)|(?<=\bbut\s))"  # where a clause starts
    r"(?:(?:ok|okay|alright|actually|yes|no|so|then|fine)[,.!]?\s+)*"
    r"(?:(?:let's|lets|let\s+us|we'll|we\s+will|(?:i|we)\s+(?:want|would\s+like|'d\s+like|prefer)\s+to)\s+"
    r"(?:use|switch\s+to|move\s+to|migrate\s+to|continue\s+(?:using|with)|keep\s+using|stay\s+with)\b"
    r"|use\s+[^.;:!?\n]{1,60}?\s+instead\s+of\b)"
)
# A pseudo-cleft desire: "what we really want is a policy", "what I want here is an RFC".
CLEFT_DESIRE = LazyPattern(
    r"\bwhat\s+(?:i|we)\s+(?:really\s+|actually\s+|ultimately\s+)?(?:want|would like|'d like)\s+(?:here\s+|in the end\s+)?is\b"
)
# An indirect question between a modal and an outcome verb embeds the outcome under another
# predicate ("we cannot conclude if tooling breaks", "see what breaks").
EMBEDDED = LazyPattern(r"\b(?:what|whether|if|which|how)\b")
# "Josh: I'll write it up" in minutes: the label names who speaks on that line.
# Lower-case handles label lines too ("joshtriplett: Would love to see ...").
SPEAKER_LABEL = LazyPattern(
    r"^(?:\[[\d:. APMapm]{3,12}\]\s*)?"  # an optional chat timestamp: "[10:32] <bob> ..."
    r"(?:<[@+%~&]?(?P<nick>[A-Za-z][\w.|-]{0,30})>\s+(?=\S)"  # IRC and Matrix bridges: "<bob> I'll ..."
    r"|(?P<who>[A-Z][\w.-]*(?: [A-Z][\w.-]*)?|[a-z][a-z0-9_.-]{2,}):\s+(?=\S))"
)


def label_name(label: re.Match[str]) -> str:
    """Who a ``SPEAKER_LABEL`` match names: the ``Name:`` or the ``<nick>``."""
    return label.group("who") or label.group("nick")


# Minutes report a planned task in the present progressive after a name: "James is scheduling a
# call". Only before a task verb (the caller checks the verb's stem), so "Anna is wondering" stays out.
NAMED_PROGRESSIVE = LazyPattern(
    rf"(?:^|(?<=[,;:]\s)|(?<=\band\s)){OWNER_LIST}\s+(?P<mod>is|are)\s+(?:also\s+|now\s+)?(?P<verb>[a-z]+ing)\b"
)
# A group as the subject of a task in minutes: "Team will suggest moderation changes", "the
# security WG will draft a proposal".
GROUP_ACTION = LazyPattern(
    r"(?:^|(?<=[,;:]\s))(?:the\s+)?(?P<owner>(?:[\w-]+\s+)?(?:team|wg|working group|committee|tsc|group|champions?"
    r"|editors?|maintainers))\s+(?P<mod>will|is going to|are going to|plans to|plan to)\s+(?P<verb>[a-z][\w-]*)",
    re.IGNORECASE,
)
# A second predicate of the same subject: "He has opened an issue and will take the discussion back
# to the tracker".
AND_WILL = LazyPattern(r"(?<=\band\s)(?P<mod>will|'ll)\s+(?P<verb>[a-z][\w-]*)", re.IGNORECASE)
# An offer stated as readiness: "I'm happy to review", "we're glad to help with the release".
# The caller requires a task verb, so "I'm glad to hear that" stays a reaction.
READY_OFFER = LazyPattern(
    r"(?<!\w)(?P<subj>i|we)\s*(?:am|'m|are|'re)\s+(?:also\s+|more than\s+|very\s+|really\s+|certainly\s+)?"
    r"(?P<mod>happy|glad|keen|eager|ready)\s+to\s+(?P<verb>[a-z][\w-]*)",
    re.IGNORECASE,
)
# A pending decision that has to wait: "SFI decision will have to wait till implementations are done".
DECISION_WAITS = LazyPattern(
    r"\b(?:decision|vote|choice|call|approval|verdict)\b[^.?!]{0,40}?\b(?:will have to|has to|have to|must|needs to"
    r"|should|can|will)\s+wait\b"
)
# Not knowing, stated as desirable knowledge: "it would be good to know why this is desired".
KNOWLEDGE_GAP = LazyPattern(
    r"\b(?:would|'d)\s+be\s+(?:good|nice|helpful|useful|interesting|great|important)\s+to\s+"
    r"(?:know|understand|find out|learn|hear|clarify|figure out)\s+(?:why|what|how|whether|if|who|when|which)\b"
)
# A tag that asks the listener to confirm what was just said: "..., is that right?".
CONFIRMATION_TAG = LazyPattern(
    r",\s*(?:is that (?:right|correct|true)|is this (?:right|correct)|right|correct|isn't it|am i right|yes|no)\s*\?+\s*$"
)
# Trouble expected under a modal: "there just might be some minor confusion".
TROUBLE_AHEAD = LazyPattern(
    r"\b(?:might|may|could|will|would|'ll)\s+(?:just\s+|also\s+|still\s+|probably\s+)?be\s+"
    r"(?:some\s+|a lot of\s+|lots of\s+|a\s+|more\s+|real\s+)?(?:[a-z]+\s+)?"
    r"(?:confusion|problems|trouble|breakage|conflicts|friction|chaos|fallout)\b"
)
# Taking an item off the agenda is an outcome of minutes: "blocking objection removed, take off the agenda".
AGENDA_REMOVAL = LazyPattern(
    r"\b(?:remove|removed|removing|take|taken|taking|drop|dropped)\s+(?:it\s+|this\s+|them\s+)?(?:off|from)\s+"
    r"(?:the\s+)?agenda\b"
)
# A minutes line that is only an outcome: "Defer.", "Stage 2", "Approved".
BARE_OUTCOME = LazyPattern(r"^(?:defer|deferred|stage\s+\d(?:\.\d)?|approved|accepted)\s*[.!]?\s*$", re.IGNORECASE)
# "Michael, would it make sense to ..." in minutes: the question follows a vocative.
VOCATIVE = LazyPattern(r"(?P<who>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?),\s+(?=[a-z])")
