"""Verbs that state a clearly different event in the same frame, for PredErr.

Each verb maps to replacements that keep the sentence well formed (same arguments) but say
something else happened. Near-synonyms (hold/carry, look/stare) are deliberately not paired:
swapping them would be a paraphrase, not a wrong predicate.
"""

from __future__ import annotations

CONTRASTS: dict[str, tuple[str, ...]] = {
    "sit": ("stand", "lie", "kneel"), "stand": ("sit", "lie", "kneel"),
    "lie": ("sit", "stand"), "kneel": ("stand", "sit"), "lay": ("sit", "stand"),
    "walk": ("run", "crawl"), "run": ("walk",), "jog": ("walk",),
    "hold": ("throw", "drop", "kick"), "carry": ("drop", "throw", "pull"),
    "throw": ("catch", "kick", "drop"), "catch": ("throw", "drop"),
    "kick": ("throw", "catch"), "hit": ("catch", "kick"), "ride": ("push", "pull", "wash"),
    "drive": ("wash", "push"), "push": ("pull",), "pull": ("push",),
    "eat": ("cook", "sell"), "drink": ("pour", "spill", "sell"), "cook": ("eat", "sell"),
    "buy": ("sell",), "sell": ("buy",), "open": ("close",), "close": ("open",),
    "enter": ("leave",), "watch": ("play",), "play": ("watch",),
"smile": ("frown", "cry"), "laugh": ("cry",),
    "cry": ("laugh",), "talk": ("listen",), "listen": ("talk",), "read": ("write",),
    "write": ("read",), "swim": ("float", "wade"), "jump": ("fall", "step"),
    "win": ("lose",), "lose": ("win",), "increase": ("decrease",), "decrease": ("increase",),
    "rise": ("fall",), "fall": ("rise",), "begin": ("end",), "finish": ("start",),
    "build": ("destroy", "demolish"), "create": ("destroy",), "attack": ("defend",),
    "defend": ("attack",), "accept": ("reject",), "reject": ("accept",),
    "allow": ("forbid",), "marry": ("divorce",), "teach": ("study",), "study": ("teach",),
    "own": ("rent",), "wear": ("hold", "remove"), "repair": ("break",), "fix": ("break",),
    "break": ("fix",), "feed": ("pet",), "pet": ("feed",), "hug": ("kiss",),
    "kiss": ("hug",), "paint": ("wash",), "wash": ("paint",), "climb": ("descend",),
    "import": ("export",), "export": ("import",), "arrive": ("depart",), "employ": ("fire",),
    "hire": ("fire",), "fire": ("hire",), "gain": ("lose",), "add": ("remove",),
    "approve": ("reject",),
    "praise": ("criticize",), "criticize": ("praise",), "love": ("hate",), "hate": ("love",),
    "agree": ("disagree",), "disagree": ("agree",), "borrow": ("lend",), "lend": ("borrow",),
    "send": ("receive",), "receive": ("send",), "invent": ("sell",), "design": ("build",),
    "direct": ("produce",), "produce": ("direct",),
    "discover": ("name",), "found": ("dissolve",),
}  # fmt: skip
# Replacements that only read as an event with a direct object ('watch the game'): used only
# where the original verb has one ('played for the team' -> 'watched for the team' is no event).
NEEDS_OBJECT = frozenset(
    "watch push pull wash throw catch kick drop sell pour spill remove destroy demolish hold "
    "rent pet feed hug kiss paint close open buy play".split()
)
