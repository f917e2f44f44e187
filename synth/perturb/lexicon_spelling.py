"""American <-> British spellings of one word (both directions), for the NoContr spelling rule.

Built from stems with their regular inflections, so every form a stem takes is covered; a form
that English does not use never matches a text and so does no harm. Words whose other spelling
is another word in some sense ("tire"/"tyre", "check"/"cheque", "program"/"programme",
"meter"/"metre") are left out.
"""

from __future__ import annotations

# -or / -our nouns and verbs: color, colors, colored, coloring, colorful, colorless
_OUR = ("color", "flavor", "harbor", "honor", "humor", "labor", "neighbor", "odor", "rumor",
        "vapor", "behavior", "favor", "armor", "endeavor", "savior", "vigor", "parlor", "splendor")  # fmt: skip
_OUR_SUFFIXES = ("", "s", "ed", "ing", "ful", "less", "hood", "hoods", "able", "ite", "ites")
# -ize / -ise verbs and their -ization nouns
_IZE = ("organiz", "realiz", "recogniz", "apologiz", "specializ", "emphasiz", "criticiz",
        "memoriz", "characteriz", "symboliz", "authoriz", "civiliz", "coloniz", "moderniz",
        "urbaniz", "privatiz", "centraliz", "standardiz", "minimiz", "maximiz", "summariz",
        "prioritiz", "legaliz", "harmoniz", "visualiz", "mobiliz", "stabiliz", "neutraliz",
        "hospitaliz", "industrializ", "popularize", "familiariz", "sympathiz", "publiciz",
        "capitaliz", "energiz", "fertiliz", "finaliz", "globaliz", "immortaliz", "revolutioniz")  # fmt: skip
_IZE_SUFFIXES = ("e", "es", "ed", "ing", "er", "ers", "ation", "ations")
# -er / -re nouns
_RE = ("cent", "theat", "fib", "lit", "kilomet", "centimet", "millimet", "sab", "spect", "somb")
_RE_SUFFIXES = ("", "s")
# single-l / double-l before a suffix: traveled / travelled
_LL = ("travel", "cancel", "model", "label", "signal", "fuel", "level", "channel", "total",
       "tunnel", "marvel", "jewel", "counsel", "duel", "dial", "shovel", "pedal", "quarrel")  # fmt: skip
_LL_SUFFIXES = ("ed", "ing", "er", "ers")
_PAIRS = (
    ("gray", "grey"), ("grays", "greys"), ("grayish", "greyish"), ("jewelry", "jewellery"),
    ("aluminum", "aluminium"), ("defense", "defence"), ("offense", "offence"),
    ("catalog", "catalogue"), ("catalogs", "catalogues"), ("pajamas", "pyjamas"),
    ("mustache", "moustache"), ("mustached", "moustached"), ("plow", "plough"),
    ("plows", "ploughs"), ("plowing", "ploughing"), ("mold", "mould"), ("molds", "moulds"),
    ("doughnut", "donut"), ("cozy", "cosy"), ("sulfur", "sulphur"), ("maneuver", "manoeuvre"),
    ("maneuvers", "manoeuvres"), ("analyze", "analyse"), ("analyzed", "analysed"),
    ("analyzing", "analysing"), ("paralyzed", "paralysed"), ("fulfill", "fulfil"),
    ("enrollment", "enrolment"), ("skillful", "skilful"), ("anemia", "anaemia"),
    ("pediatric", "paediatric"), ("encyclopedia", "encyclopaedia"), ("esthetic", "aesthetic"),
    ("judgment", "judgement"), ("acknowledgment", "acknowledgement"), ("airplane", "aeroplane"),
    ("airplanes", "aeroplanes"), ("mom", "mum"), ("moms", "mums"), ("whiskey", "whisky"),
    ("artifact", "artefact"), ("artifacts", "artefacts"), ("omelet", "omelette"),
)
_US_TO_UK = (
    [(stem + s, stem[:-2] + "our" + s) for stem in _OUR for s in _OUR_SUFFIXES]
    + [(stem.rstrip("e") + s, stem.rstrip("e")[:-1] + "s" + s) for stem in _IZE for s in _IZE_SUFFIXES]
    + [(stem + "er" + s, stem + "re" + s) for stem in _RE for s in _RE_SUFFIXES]
    + [(stem + s, stem + "l" + s) for stem in _LL for s in _LL_SUFFIXES]
    + list(_PAIRS)
)
SPELLING: dict[str, str] = {us: uk for us, uk in _US_TO_UK} | {uk: us for us, uk in _US_TO_UK}
