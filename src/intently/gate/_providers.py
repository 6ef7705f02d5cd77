"""Registrable domains of large public mail and web providers, and whether a host is one.

The typo-squat check (``_provenance._squats``) reads a host one letter off the user's as a
look-alike, because that is how an impersonation is made: someone registers ``exampe.com`` so
that a reader misses the missing letter. Some real, independent domains are one letter apart
too: ``gmail.com`` and ``mail.com``, ``outlook.de`` and ``outlook.be``, ``live.de`` and
``live.be``. Neither of such a pair was made to look like the other (each is a provider with
millions of users, registered long before anyone's address at the other), so an address at one
is not a forgery of an address at the other; blocking it as one refused ordinary traffic.

This list is data, not a rule for one example: the sign-up domains of the public mail
providers with the largest user bases (their own country domains included, as they publish
them), and the main sites of the largest (``google.com``, ``apple.com``, ``microsoft.com``). A host is on it when it is
an entry or a subdomain of one (``mail.google.com``); ``gmail.com.evil.net`` is not. An entry
cannot be registered by an attacker, since each is already someone's; a host that is not on
the list is still checked letter by letter, so ``gmaill.com``, ``outlook.co`` and, for the
user's ``icloud.com``, ``cloud.com`` (a real site, but no mail provider on the list) stay
squats: where the list does not vouch for both, the check fails closed.
"""

from __future__ import annotations

__all__ = ["PROVIDERS", "provider_of"]

_OUTLOOK_COUNTRIES = [
    "at", "be", "cl", "cz", "de", "dk", "es", "fr", "hu", "ie", "in", "it", "jp", "kr", "lv", "my", "ph",
    "pt", "sa", "sg", "sk", "co.id", "co.il", "co.nz", "co.th", "com.ar", "com.au", "com.br", "com.gr",
    "com.tr", "com.vn",
]  # fmt: skip
_HOTMAIL_COUNTRIES = [
    "be", "ca", "ch", "cl", "co.uk", "com.ar", "com.au", "com.br", "de", "dk", "es", "fi", "fr", "gr", "it",
    "nl", "no", "se",
]  # fmt: skip
_LIVE_COUNTRIES = [
    "at", "be", "ca", "ch", "cl", "co.uk", "com.ar", "com.au", "com.mx", "de", "dk", "fi", "fr", "ie", "it",
    "jp", "nl", "no", "se",
]  # fmt: skip
_YAHOO_COUNTRIES = [
    "ca", "co.in", "co.jp", "co.uk", "com.ar", "com.au", "com.br", "com.mx", "de", "es", "fr", "gr", "ie",
    "in", "it", "se",
]  # fmt: skip

PROVIDERS: frozenset[str] = frozenset(
    [
        # Google, Microsoft, Apple, Yahoo, AOL
        "gmail.com", "googlemail.com", "google.com",
        "outlook.com", "hotmail.com", "live.com", "msn.com", "microsoft.com",
        *(f"outlook.{c}" for c in _OUTLOOK_COUNTRIES),
        *(f"hotmail.{c}" for c in _HOTMAIL_COUNTRIES),
        *(f"live.{c}" for c in _LIVE_COUNTRIES),
        "icloud.com", "me.com", "mac.com", "apple.com",
        "yahoo.com", "ymail.com", "rocketmail.com", *(f"yahoo.{c}" for c in _YAHOO_COUNTRIES),
        "aol.com", "aol.de", "aol.fr", "aol.co.uk", "aim.com",
        # mail.com and its sister domains, GMX, WEB.DE and other European providers
        "mail.com", "email.com", "usa.com", "post.com", "consultant.com", "engineer.com",
        "gmx.com", "gmx.net", "gmx.de", "gmx.at", "gmx.ch", "gmx.fr", "web.de", "t-online.de",
        "freenet.de", "mail.de", "posteo.de", "mailbox.org", "orange.fr", "wanadoo.fr", "free.fr",
        "laposte.net", "sfr.fr", "libero.it", "virgilio.it", "tiscali.it", "alice.it", "seznam.cz",
        "wp.pl", "o2.pl", "onet.pl", "interia.pl", "bluewin.ch", "telenet.be", "skynet.be",
        "ziggo.nl", "kpnmail.nl", "btinternet.com", "sky.com", "virginmedia.com", "ntlworld.com",
        "proton.me", "protonmail.com", "pm.me", "tutanota.com", "tuta.io", "zoho.com",
        "fastmail.com", "hey.com",
        # North America, Asia, elsewhere
        "comcast.net", "verizon.net", "att.net", "sbcglobal.net", "cox.net", "charter.net",
        "bellsouth.net", "earthlink.net", "shaw.ca", "rogers.com", "sympatico.ca", "bigpond.com",
        "optusnet.com.au", "mail.ru", "bk.ru", "list.ru", "inbox.ru", "yandex.ru", "yandex.com",
        "ya.ru", "rambler.ru", "qq.com", "163.com", "126.com", "sina.com", "naver.com",
        "daum.net", "hanmail.net", "rediffmail.com", "uol.com.br", "bol.com.br",
    ]
)  # fmt: skip


def provider_of(host: str) -> str | None:
    """The entry of :data:`PROVIDERS` that ``host`` (lower case, no port) is or is under, else ``None``."""
    labels = host.split(".")
    for i in range(len(labels) - 1):
        candidate = ".".join(labels[i:])
        if candidate in PROVIDERS:
            return candidate
    return None
