"""Signing in to Google for the Sheets store: credentials files, the saved token, and
an OAuth sign-in that works on a machine without a browser.

Every kind of credentials asks for one scope, ``spreadsheets`` (read and write the
spreadsheets the account can open; no Drive access).

The sign-in (``plankit checklist auth``) prints an address to open in any browser, on
any machine; after consent Google sends the browser to a ``localhost`` address that
does not load, and the user pastes that address (or just its ``code``) back.  The
token is kept, readable by the user only, in ``$PLANKIT_HOME`` or the user config
folder.  Without a terminal to ask in (``plankit mcp``, a pipe) nothing waits: the
error says to run ``plankit checklist auth``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable
from typing import Any, TextIO
from urllib.parse import parse_qs, urlsplit

from plankit.checklist.errors import StoreError

SCOPES = ["https://www.googleapis.com/auth/spreadsheets"]
"""The one scope asked for: the spreadsheets the account can open, nothing else."""
REDIRECT_URI = "http://localhost:8765/"
"""Where Google sends the browser after consent (a desktop client may use any
loopback port; nothing needs to listen there)."""
TOKEN_NAME = "google-authorized-user.json"


def token_path() -> str:
    """Where the signed-in user's token is kept."""
    home = os.environ.get("PLANKIT_HOME")
    if home:
        return os.path.join(home, TOKEN_NAME)
    import platformdirs

    return os.path.join(platformdirs.user_config_dir("plankit"), TOKEN_NAME)


def read_json(path: str) -> dict[str, Any]:
    """A credentials file's JSON object; :class:`StoreError` when it cannot be read."""
    try:
        with open(path, encoding="utf-8") as handle:
            info = json.load(handle)
    except OSError as exc:
        raise StoreError(
            f"cannot read the credentials file {path} ({exc.strerror})", code="no-credentials"
        ) from None
    except ValueError:
        raise StoreError(f"{path} is not a JSON credentials file", code="bad-credentials") from None
    if not isinstance(info, dict):
        raise StoreError(f"{path} is not a JSON credentials file", code="bad-credentials")
    return info


def user_credentials(client_file: str, info: dict[str, Any], *, interactive: bool) -> Any:
    """Credentials for an OAuth client file: the saved token, or a sign-in when
    ``interactive`` (else :class:`StoreError` saying how to sign in)."""
    if "installed" not in info:
        raise StoreError(
            f"{client_file} is an OAuth client of type 'web'; create an OAuth client of type "
            "'Desktop app' in the Google Cloud console and use its file",
            code="bad-credentials",
        )
    token = token_path()
    if os.path.exists(token):
        return load_token(token)
    if not interactive:
        raise StoreError(
            "Google Sheets needs a one-time sign-in: run `plankit checklist auth "
            f"--credentials {client_file}` in a terminal (it prints an address to open in any "
            f"browser); the token is then kept in {token}",
            code="auth-required",
        )
    return sign_in(client_file)


def load_token(path: str) -> Any:
    """The saved authorized-user credentials at ``path``."""
    from google.oauth2 import credentials as oauth2

    try:
        load: Any = oauth2.Credentials.from_authorized_user_file
        return load(path, SCOPES)
    except (ValueError, KeyError, OSError) as exc:
        raise StoreError(
            f"the saved Google sign-in {path} cannot be used ({exc}); delete it and run "
            "`plankit checklist auth` again",
            code="bad-credentials",
        ) from None


def _new_flow(client_file: str) -> Any:
    from google_auth_oauthlib.flow import InstalledAppFlow  # type: ignore[import-untyped]

    return InstalledAppFlow.from_client_secrets_file(
        client_file, scopes=SCOPES, redirect_uri=REDIRECT_URI
    )


def code_from(answer: str, state: str) -> str:
    """The authorization code in what the user pasted: the whole address Google sent
    the browser to, or the code alone."""
    text = answer.strip()
    if not text:
        raise StoreError("nothing was pasted; run `plankit checklist auth` again", code="auth")
    if "://" not in text and "code=" not in text:
        return text
    try:
        query = parse_qs(urlsplit(text).query if "://" in text else text.lstrip("?"))
    except ValueError as exc:  # unbalanced brackets in the host, and the like
        raise StoreError(
            f"the pasted address is not a valid URL ({exc}); paste the whole address the "
            "browser shows, or the code alone",
            code="auth",
        ) from None
    if "error" in query:
        raise StoreError(
            f"Google did not grant access ({query['error'][0]}); run `plankit checklist auth` "
            "again and allow access to spreadsheets",
            code="auth",
        )
    if query.get("state", [state])[0] != state:
        raise StoreError(
            "the pasted address belongs to another sign-in (its state differs); paste the "
            "address from this sign-in",
            code="auth",
        )
    codes = query.get("code")
    if not codes:
        raise StoreError(
            "the pasted address has no code=…; paste the whole address the browser shows "
            "after you allowed access",
            code="auth",
        )
    return codes[0]


def sign_in(
    client_file: str,
    *,
    prompt: Callable[[str], str] = input,
    out: TextIO | None = None,
) -> Any:
    """Sign in with the OAuth client ``client_file``: print the address, read the
    pasted answer, get the token and keep it.  Returns the credentials."""
    stream = out if out is not None else sys.stderr
    try:
        flow = _new_flow(client_file)
    except (ValueError, KeyError, OSError) as exc:
        raise StoreError(
            f"{client_file}: unusable OAuth client file ({exc})", code="bad-credentials"
        ) from None
    url, state = flow.authorization_url(access_type="offline", prompt="consent")
    print(
        "To let plankit read and write your spreadsheets (and nothing else):\n"
        "1. Open this address in a browser, on this machine or any other:\n"
        f"   {url}\n"
        "2. Sign in and allow access.\n"
        f"3. The browser then goes to {REDIRECT_URI}… and shows an error page: that is\n"
        "   expected. Copy the whole address from its address bar.",
        file=stream,
        flush=True,
    )
    try:
        answer = prompt("4. Paste it here: ")
    except EOFError:
        raise StoreError(
            "no answer was read (standard input is closed); run `plankit checklist auth` "
            "in a terminal",
            code="auth",
        ) from None
    code = code_from(answer, state)
    try:
        flow.fetch_token(code=code)
    except Exception as exc:  # oauthlib, requests and google-auth errors alike
        raise _sign_in_error(exc) from None
    credentials = flow.credentials
    path = token_path()
    saved = json.loads(credentials.to_json())
    saved["type"] = "authorized_user"  # what Google's own tools write, and read back
    save_token(path, json.dumps(saved, indent=2) + "\n")
    print(
        f"Signed in. The token is kept in {path} (readable by you only).", file=stream, flush=True
    )
    return credentials


def _sign_in_error(exc: Exception) -> StoreError:
    import requests

    from plankit.checklist.stores.gsheets_net import network_reason

    if isinstance(exc, requests.exceptions.RequestException):
        return StoreError(
            f"cannot reach Google's sign-in service (oauth2.googleapis.com): "
            f"{network_reason(exc)}; check the network connection and try again",
            code="network",
        )
    text = " ".join(str(exc).split()) or type(exc).__name__
    return StoreError(
        f"Google refused the sign-in ({text}); the code can be used once and expires in "
        "minutes: run `plankit checklist auth` again",
        code="auth",
    )


def save_token(path: str, text: str) -> None:
    """Keep the token at ``path``, readable and writable by the user only."""
    from plankit.textio import write_text_atomic

    folder = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(folder, exist_ok=True)
        with contextlib.suppress(FileExistsError):  # a new file is created 0600 first
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        os.chmod(path, 0o600)
        write_text_atomic(path, text)
    except OSError as exc:
        raise StoreError(
            f"cannot keep the Google token in {path} ({exc.strerror}); set PLANKIT_HOME to a "
            "writable folder",
            code="write-failed",
        ) from None
