"""Synthetic names for the load generators: organizations, users, customers' e-mail addresses
and the auction items.

Owns fixed, ordered name lists (the generators index into them by id, so a name is a pure
function of its id).  Invariant: the lists never change order or length -- a data
directory's subsources were written with them.  The names are mzlite's own, built from
syllables and common given names; only their counts and roles follow Materialize's
generators.  Deliberately not here: randomness (``storage.sources.generators``).
"""
from __future__ import annotations

_HEADS = ("Open", "Year", "Good", "Con", "Gold", "Is", "Go", "Nam", "Don", "Ware", "Fax", "Sun", "Lex", "Sum",
          "Tree", "Zen", "Plus", "Dam", "Tough", "Code")
_TAILS = ("lane", "in", "silron", "dax", "tech", "dex", "job", "dom", "zoom", "corp", "zim", "quad", "phase",
          "quote", "plex", "volax", "ace", "trics", "strip", "base", "zap", "how", "ware", "hold", "com")

#: 75 organizations, as Materialize's auction generator has
ORGANIZATIONS: tuple[str, ...] = tuple(
    _HEADS[i % len(_HEADS)] + _TAILS[(i * 7 + i // len(_HEADS)) % len(_TAILS)] for i in range(75))

_GIVEN = ("Ada", "Alan", "Alice", "Amir", "Anna", "Arjun", "Beatriz", "Ben", "Carla", "Chen", "Dara", "David",
          "Elena", "Emeka", "Farah", "Felix", "Grace", "Hana", "Hugo", "Ines", "Ivan", "Jonas", "Kai", "Kira",
          "Lars", "Leila", "Lucia", "Malik", "Maya", "Nadia", "Noah", "Olga", "Omar", "Paula", "Quinn", "Rosa",
          "Sami", "Tara", "Uma", "Viktor")
_FAMILY = ("Abara", "Bauer", "Castro", "Dahl", "Eze", "Fischer", "Garcia", "Haddad", "Ito", "Jansen", "Kowalski",
           "Larsen", "Moreau", "Nakamura", "Okafor", "Petrov", "Quist", "Rossi", "Santos", "Tanaka", "Ueda",
           "Varga", "Weber", "Xu", "Yilmaz", "Zhang", "Almeida", "Berg", "Costa", "Dubois", "Eriksen", "Ferreira",
           "Gomez", "Horvat", "Iqbal", "Jovanovic", "Kim", "Lindqvist", "Mendes", "Novak", "Olsen", "Park",
           "Quintero", "Ramos", "Schmidt", "Torres", "Urbano", "Vasquez", "Wong", "Young", "Zimmer", "Adler",
           "Brandt", "Cohen", "Diaz", "Engel", "Fontaine", "Gupta", "Hale", "Ivanova", "Jung", "Keller", "Lopez",
           "Maier", "Nilsson", "Ortiz", "Pereira", "Reyes", "Silva", "Toth", "Ulrich", "Vogel", "Walker",
           "Yamada", "Zeller", "Arnaud", "Bianchi", "Carter", "Dimitrov", "Esposito", "Falk", "Greco", "Hansen",
           "Ibrahim", "Jensen", "Kovacs", "Lund", "Marin", "Nguyen", "Otto", "Popescu", "Rahman", "Sato",
           "Tran", "Unger", "Vidal", "Wolf", "Yusuf", "Zapata", "Moreno")

#: 4076 users (the auction generator's sellers and buyers: as many as Materialize's has)
USERS: tuple[str, ...] = tuple(f"{_GIVEN[i % len(_GIVEN)]} {_FAMILY[(i // len(_GIVEN)) % len(_FAMILY)]}"
                               + ("" if i < len(_GIVEN) * len(_FAMILY) else f" {i // (len(_GIVEN) * len(_FAMILY)) + 1}")
                               for i in range(4076))

#: what is auctioned (Materialize's auction generator's five items)
AUCTION_ITEMS: tuple[str, ...] = ("Signed Memorabilia", "City Bar Crawl", "Best Pizza in Town", "Gift Basket",
                                  "Custom Art")

#: 50 customers of the marketing generator (ids 0..49)
CUSTOMER_EMAILS: tuple[str, ...] = tuple(
    f"{_GIVEN[(i * 3) % len(_GIVEN)].lower()}.{_FAMILY[(i * 11) % len(_FAMILY)].lower()}@email.com"
    for i in range(50))
