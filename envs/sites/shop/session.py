"""Who is visiting: the signed-in customer (a signed session cookie) and the products they viewed.

The session cookie is ``<email>.<nonce>.<signature>`` (email base64url-encoded, HMAC-SHA256 over
both with the site's key). Sessions live in the cookie alone, so a login saved by
``introspect webarena login`` (a Playwright storage state) stays valid in any later process, as a
real shop's persistent login does; each sign-in gets a fresh nonce, so two logins never share a
cookie. The key is a constant: this is a local demo site, not a place to keep secrets.

"Recently viewed" products are a plain cookie of product slugs, newest first (Magento keeps the
same list per browser): a page that shows them looks different after a product was viewed.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from http.cookies import CookieError, SimpleCookie

SESSION_COOKIE = "shop_session"
RECENT_COOKIE = "recently_viewed"
RECENT_LIMIT = 5
_KEY = b"introspect-demo-shop-session"


@dataclass(frozen=True)
class Visitor:
    """What a request's cookies say: the signed-in email (None for a guest) and viewed products."""

    email: str | None = None
    recent: tuple[str, ...] = ()

    @property
    def signed_in(self) -> bool:
        return self.email is not None


def _sign(payload: str) -> str:
    return hmac.new(_KEY, payload.encode("utf-8"), hashlib.sha256).hexdigest()


def issue(email: str) -> str:
    """A new session cookie value for ``email``."""
    encoded = base64.urlsafe_b64encode(email.encode("utf-8")).decode("ascii").rstrip("=")
    payload = f"{encoded}.{secrets.token_hex(8)}"
    return f"{payload}.{_sign(payload)}"


def email_of(value: str) -> str | None:
    """The email a session cookie was issued for, or None when it is malformed or forged."""
    encoded, _, rest = value.partition(".")
    nonce, _, signature = rest.partition(".")
    if not (encoded and nonce and signature) or not hmac.compare_digest(_sign(f"{encoded}.{nonce}"), signature):
        return None
    try:
        return base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode("utf-8")
    except ValueError:
        return None


def visitor(cookie_header: str | None, known_email: str) -> Visitor:
    """The visitor of a request; a session for anyone but the shop's customer is a guest."""
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(cookie_header or "")
    except CookieError:
        return Visitor()
    email = email_of(jar[SESSION_COOKIE].value) if SESSION_COOKIE in jar else None
    recent = tuple(s for s in jar[RECENT_COOKIE].value.split("~") if s) if RECENT_COOKIE in jar else ()
    return Visitor(email if email == known_email else None, recent[:RECENT_LIMIT])


def cookie(name: str, value: str, *, clear: bool = False) -> str:
    """A Set-Cookie header value for the whole site."""
    attributes = "Path=/; SameSite=Lax" + ("; HttpOnly" if name == SESSION_COOKIE else "")
    return f"{name}={value}; {attributes}" + ("; Max-Age=0" if clear else "")


def viewed(recent: tuple[str, ...], slug: str) -> str:
    """The recently-viewed cookie value after viewing ``slug``."""
    return "~".join((slug, *[s for s in recent if s != slug])[:RECENT_LIMIT])
