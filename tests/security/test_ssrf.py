"""URL reads never reach loopback or private networks unless the project allows it.

A plan's READ of ``http://127.0.0.1:PORT/secret`` used to put a local service's secret
into ``input.md``, and a redirect to a local address was followed.  Now every hop's
host is resolved once, each address is checked, and the connection goes to the very
address checked.  Every test server here listens on 127.0.0.1; a "public" host is a
fake address that the injected connector maps to a local server, so no test sends
anything anywhere else.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import re
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from plankit.errors import InputError
from plankit.teddy.context import urls
from plankit.teddy.context.network import NetworkPolicy, address_kind
from plankit.teddy.context.payload import build_payload
from plankit.teddy.context.urls import MAX_REDIRECTS, FetchError, fetch_url
from plankit.teddy.session.config import load_config
from tests.teddy.test_session_e2e import plan, start_session, teddy

SECRET = "s3cr3t-token-4242"
PUBLIC = "93.184.215.14"
"""A global address no test connects to: the connector maps it to a local server."""
HINT = "in .teddy/config.yaml"


@dataclass
class Server:
    """A local HTTP server on 127.0.0.1 and the paths it was asked for."""

    port: int
    routes: dict[str, tuple[int, dict[str, str], str]]
    hits: list[str] = field(default_factory=list)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@contextlib.contextmanager
def _serve(routes: dict[str, tuple[int, dict[str, str], str]]) -> Iterator[Server]:
    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            status, headers, body = routes.get(self.path, (404, {}, "no such page"))
            data = body.encode()
            self.send_response(status)
            for name, value in {"Content-Type": "text/plain", **headers}.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield Server(httpd.server_address[1], routes, hits)
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def secret() -> Iterator[Server]:
    """A local service holding a secret: what a fetch must not reach."""
    with _serve({"/secret": (200, {}, SECRET)}) as server:
        yield server


@pytest.fixture
def public() -> Iterator[Server]:
    """A stand-in for a public web site (reached through the fake public address)."""
    with _serve({"/page": (200, {}, "a public page")}) as server:
        yield server


@dataclass
class Net:
    """An injected resolver and connector: names answer from ``names`` (a list of
    answers is used one per lookup), the public address leads to ``public``, and only
    127.0.0.1 is ever connected to."""

    public: Server
    names: dict[str, list[list[str]]] = field(default_factory=dict)
    lookups: list[str] = field(default_factory=list)
    connections: list[tuple[str, int]] = field(default_factory=list)

    def resolve(self, host: str, port: int) -> list[str]:
        self.lookups.append(host)
        answers = self.names[host]
        return answers.pop(0) if len(answers) > 1 else answers[0]

    def connect(self, ip: str, port: int, timeout: float) -> socket.socket:
        self.connections.append((ip, port))
        if ip == PUBLIC:
            return socket.create_connection(("127.0.0.1", self.public.port), timeout)
        assert ip == "127.0.0.1", f"a test tried to connect to {ip}"
        return socket.create_connection((ip, port), timeout)


@pytest.fixture
def net(public: Server, monkeypatch: pytest.MonkeyPatch) -> Net:
    fake = Net(public)
    monkeypatch.setattr(urls, "resolve_host", fake.resolve)
    monkeypatch.setattr(urls, "connect_to", fake.connect)
    return fake


def _files_holding(root: Path, text: str) -> list[Path]:
    found = []
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            path = Path(dirpath, name)
            if not path.is_symlink() and text.encode() in path.read_bytes():
                found.append(path)
    return found


def _payload(root: Path, url: str) -> str:
    """``input.md`` of a project whose context holds ``url`` (with its URL cache)."""
    session = root / ".teddy" / "s"
    turn = session / "01"
    turn.mkdir(parents=True, exist_ok=True)
    (turn / "turn.context").write_text(url + "\n")
    return build_payload(root, session, turn)


def _allow(root: Path, setting: str) -> None:
    (root / ".teddy").mkdir(exist_ok=True)
    (root / ".teddy" / "config.yaml").write_text(f"network:\n  {setting}\n")


# --- the reported attack, end to end -----------------------------------------------------


def test_a_read_of_a_local_service_is_refused_and_its_secret_written_nowhere(
    tmp_path: Path, secret: Server
) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    url = f"{secret.base}/secret"
    turn = start_session(root) / "01"
    (turn / "plan.md").write_text(plan(f"### `READ`\n- **Resource:** [{url}]({url})"))
    teddy(root, "execute", "-y", check=1)  # the READ fails in its own turn
    refusal = (
        f"{url} refused: 127.0.0.1 is a loopback address; allow it with"
        f" network.allow_networks {HINT}"
    )
    report = (turn / "report.md").read_text()
    assert f"the URL cannot be fetched: {refusal}" in report
    teddy(root, "context")
    inputs = sorted(root.glob(".teddy/*/*/input.md"))
    assert inputs, "teddy context wrote no input.md"
    assert "Could not fetch this URL" not in inputs[-1].read_text()  # not a resource
    assert secret.hits == []  # not even a connection that asked for it
    assert _files_holding(tmp_path, SECRET) == []


def test_the_opt_in_lets_the_same_read_through(tmp_path: Path, secret: Server) -> None:
    _allow(tmp_path, 'allow_networks: ["127.0.0.0/8"]')
    text = _payload(tmp_path, f"{secret.base}/secret")
    assert SECRET in text
    assert secret.hits == ["/secret"]


@pytest.mark.parametrize(
    "host",
    [
        "[::ffff:127.0.0.1]",  # IPv4-mapped IPv6
        "2130706433",  # 127.0.0.1 as one number, resolved by the system
        "127.1",  # the short form
        "0.0.0.0",  # reaches the local host on Linux
    ],
)
def test_other_spellings_of_the_local_host_are_refused(
    tmp_path: Path, secret: Server, host: str
) -> None:
    url = f"http://{host}:{secret.port}/secret"
    with pytest.raises(FetchError, match=r"refused: .*(loopback|unspecified)") as err:
        fetch_url(url, tmp_path / "cache")
    assert "\n" not in str(err.value) and HINT in str(err.value)
    assert secret.hits == []
    assert not (tmp_path / "cache").exists()


def test_a_name_resolving_to_loopback_is_refused_naming_allow_hosts(
    tmp_path: Path, secret: Server, net: Net
) -> None:
    net.names["localhost"] = [["127.0.0.1"]]
    url = f"http://localhost:{secret.port}/secret"
    with pytest.raises(FetchError) as err:
        fetch_url(url, None)
    assert str(err.value) == (
        f"{url} refused: localhost resolves to 127.0.0.1, a loopback address;"
        f" allow it with network.allow_hosts {HINT}"
    )
    assert net.connections == [] and secret.hits == []


# --- redirects -----------------------------------------------------------------------------


def test_a_redirect_to_a_local_name_is_refused_at_that_hop(
    tmp_path: Path, secret: Server, public: Server, net: Net
) -> None:
    inside = f"http://intranet.example:{secret.port}/secret"
    public.routes["/start"] = (302, {"Location": inside}, "")
    net.names.update({"docs.example": [[PUBLIC]], "intranet.example": [["127.0.0.1"]]})
    url = "http://docs.example/start"
    text = _payload(tmp_path, url)
    assert (
        f"Could not fetch this URL: {url} (redirected to {inside}) refused: intranet.example"
        " resolves to 127.0.0.1, a loopback address; allow it with network.allow_hosts"
        f" {HINT}."
    ) in text
    assert public.hits == ["/start"] and secret.hits == []
    assert [ip for ip, _ in net.connections] == [PUBLIC]
    assert _files_holding(tmp_path, SECRET) == []


def test_the_opt_in_lets_the_redirect_chain_through(
    tmp_path: Path, secret: Server, public: Server, net: Net
) -> None:
    _allow(tmp_path, "allow_hosts: [intranet.example]")
    public.routes["/start"] = (
        301,
        {"Location": f"http://intranet.example:{secret.port}/secret"},
        "",
    )
    net.names.update({"docs.example": [[PUBLIC]], "intranet.example": [["127.0.0.1"]]})
    assert SECRET in _payload(tmp_path, "http://docs.example/start")
    assert secret.hits == ["/secret"]


@pytest.mark.parametrize(
    ("location", "why"),
    [
        ("http://169.254.169.254/latest/meta-data/", "a cloud metadata address"),
        ("http://10.1.2.3/", "a private address"),
        ("http://[fd00::1]/", "a unique-local address"),
    ],
)
def test_a_redirect_to_a_private_address_is_refused(
    public: Server, net: Net, location: str, why: str
) -> None:
    public.routes["/go"] = (307, {"Location": location}, "")
    net.names["docs.example"] = [[PUBLIC]]
    with pytest.raises(FetchError, match=f"redirected to .* is {why}; allow it with"):
        fetch_url("http://docs.example/go", None)
    assert [ip for ip, _ in net.connections] == [PUBLIC]


def test_a_redirect_to_a_file_url_is_refused(public: Server, net: Net) -> None:
    public.routes["/go"] = (302, {"Location": "file:///etc/passwd"}, "")
    net.names["docs.example"] = [[PUBLIC]]
    with pytest.raises(FetchError, match="redirected to file:///etc/passwd: only http and https"):
        fetch_url("http://docs.example/go", None)


def test_redirects_are_followed_a_bounded_number_of_times(public: Server, net: Net) -> None:
    public.routes["/loop"] = (302, {"Location": "/loop"}, "")
    net.names["docs.example"] = [[PUBLIC]]
    with pytest.raises(FetchError, match=f"more than {MAX_REDIRECTS} redirects"):
        fetch_url("http://docs.example/loop", None)
    assert public.hits == ["/loop"] * (MAX_REDIRECTS + 1)
    public.routes["/a"] = (302, {"Location": "/b"}, "")
    public.routes["/b"] = (308, {"Location": "http://docs.example/page"}, "")
    assert fetch_url("http://docs.example/a", None) == "a public page"


# --- DNS rebinding ---------------------------------------------------------------------------


def test_a_name_answering_public_then_local_never_leads_to_the_local_address(
    secret: Server, public: Server, net: Net
) -> None:
    # a rebinding name: public at the check, loopback at any later lookup
    net.names["rebind.example"] = [[PUBLIC], ["127.0.0.1"]]
    public.routes["/secret"] = (200, {}, "the public host's page")
    url = f"http://rebind.example:{secret.port}/secret"
    assert fetch_url(url, None) == "the public host's page"
    assert net.lookups == ["rebind.example"]  # resolved once
    assert [ip for ip, _ in net.connections] == [PUBLIC]
    assert secret.hits == []  # the local service never saw a request


def test_each_hop_is_resolved_and_checked_again(secret: Server, public: Server, net: Net) -> None:
    net.names["rebind.example"] = [[PUBLIC], ["127.0.0.1"]]
    public.routes["/bounce"] = (
        302,
        {"Location": f"http://rebind.example:{secret.port}/secret"},
        "",
    )
    with pytest.raises(
        FetchError, match=re.escape("rebind.example resolves to 127.0.0.1, a loopback")
    ):
        fetch_url("http://rebind.example/bounce", None)
    assert [ip for ip, _ in net.connections] == [PUBLIC]
    assert secret.hits == []


def test_a_name_with_a_private_address_among_public_ones_is_refused(
    public: Server, net: Net
) -> None:
    net.names["mixed.example"] = [[PUBLIC, "10.0.0.5"]]
    with pytest.raises(FetchError, match=re.escape("resolves to 10.0.0.5, a private address")):
        fetch_url("http://mixed.example/page", None)
    assert net.connections == []


def test_the_request_names_the_host_not_the_address(net: Net) -> None:
    seen: list[bytes] = []
    net.names["docs.example"] = [[PUBLIC]]
    with socket.socket() as listener:  # a raw server, to see the request as sent
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        net.public = Server(listener.getsockname()[1], {})

        def answer() -> None:
            conn, _ = listener.accept()
            with conn:
                request = b""
                while b"\r\n\r\n" not in request:
                    request += conn.recv(4096)
                seen.append(request)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")

        thread = threading.Thread(target=answer, daemon=True)
        thread.start()
        assert fetch_url("http://docs.example:8080/a b?q=1", None) == "ok"
        thread.join(60)
    assert seen[0].startswith(b"GET /a%20b?q=1 HTTP/1.1\r\n")
    assert b"\r\nHost: docs.example:8080\r\n" in seen[0]
    assert net.connections == [(PUBLIC, 8080)]


# --- the rules and the settings ------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "a loopback address"),
        ("127.255.0.9", "a loopback address"),
        ("::1", "a loopback address"),
        ("10.1.2.3", "a private address"),
        ("172.16.0.1", "a private address"),
        ("192.168.1.1", "a private address"),
        ("100.64.0.1", "a shared address (carrier-grade NAT)"),
        ("169.254.169.254", "a cloud metadata address"),
        ("169.254.1.1", "a link-local address"),
        ("fe80::1", "a link-local address"),
        ("fc00::1", "a unique-local address"),
        ("fd12:3456::1", "a unique-local address"),
        ("fec0::1", "a site-local address"),
        ("0.0.0.0", "an unspecified address"),
        ("0.1.2.3", "an unspecified address"),
        ("::", "an unspecified address"),
        ("224.0.0.1", "a multicast address"),
        ("239.1.1.1", "a multicast address"),
        ("ff02::1", "a multicast address"),
        ("240.0.0.1", "an address reserved for special use"),
        ("255.255.255.255", "an address reserved for special use"),
        ("192.0.2.1", "an address reserved for special use"),
        ("2001:db8::1", "an address reserved for special use"),
        ("::ffff:127.0.0.1", "a loopback address (127.0.0.1 in IPv6 form)"),
        ("::ffff:10.0.0.1", "a private address (10.0.0.1 in IPv6 form)"),
        ("2002:7f00:1::1", "a loopback address (127.0.0.1 in IPv6 form)"),
        ("2002:a9fe:a9fe::", "a cloud metadata address (169.254.169.254 in IPv6 form)"),
        ("64:ff9b::7f00:1", "a loopback address (127.0.0.1 in IPv6 form)"),
        ("::7f00:1", "an address reserved for special use"),  # IPv4-compatible, obsolete
        ("8.8.8.8", None),
        (PUBLIC, None),
        ("2606:4700::1111", None),
        ("::ffff:8.8.8.8", None),
        ("2002:808:808::1", None),
    ],
)
def test_address_kinds(address: str, kind: str | None) -> None:
    assert address_kind(ipaddress.ip_address(address)) == kind


def test_allowed_networks_cover_the_ipv6_forms_of_an_allowed_ipv4_address() -> None:
    policy = NetworkPolicy.from_settings(("*.corp.example",), ("10.0.0.0/8", "::1/128"))
    assert policy.refusal("10.9.9.9") is None
    assert policy.refusal("::ffff:10.9.9.9") is None
    assert policy.refusal("::1") is None
    assert policy.refusal("127.0.0.1") == "a loopback address"
    assert policy.refusal("192.168.0.1") == "a private address"
    assert policy.host_allowed("wiki.corp.example") and policy.host_allowed("A.Corp.Example.")
    assert not policy.host_allowed("corp.example") and not policy.host_allowed("evilcorp.example")


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        (
            'allow_networks: ["10.1.2.3/8"]',
            "'network.allow_networks': '10.1.2.3/8' is not an address or network"
            " (10.1.2.3/8 has host bits set); did you mean 10.0.0.0/8?",
        ),
        (
            "allow_networks: [intranet]",
            "'network.allow_networks': 'intranet' is not an address or network",
        ),
        (
            'allow_hosts: ["http://wiki.corp/x"]',
            "'network.allow_hosts' takes host names, not URLs or paths: 'http://wiki.corp/x'"
            " (write it as 'wiki.corp')",
        ),
        ("allow_hosts: 3", "'network.allow_hosts' must be a list of strings, not 3"),
        ("allow_host: [a]", "unknown setting 'network.allow_host'; did you mean"),
    ],
)
def test_bad_network_settings_are_one_line_errors(
    tmp_path: Path, setting: str, message: str
) -> None:
    _allow(tmp_path, setting)
    with pytest.raises(InputError) as err:
        load_config(tmp_path)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_policy_given_to_fetch_url_wins_over_the_project(tmp_path: Path, secret: Server) -> None:
    _allow(tmp_path, 'allow_networks: ["127.0.0.1"]')
    url = f"{secret.base}/secret"
    with pytest.raises(FetchError, match="loopback"):
        fetch_url(url, None, root=tmp_path, policy=NetworkPolicy())
    assert fetch_url(url, None, root=tmp_path) == SECRET
    fetch = partial(fetch_url, cache_dir=None, root=tmp_path)
    assert fetch(url) == SECRET


def _self_signed(directory: Path, name: str) -> tuple[Path, Path]:
    """A certificate for ``name`` that signs itself, and its key (PEM files)."""
    import datetime

    x509 = pytest.importorskip("cryptography.x509")
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def test_https_goes_to_the_checked_address_and_verifies_the_host_name(
    tmp_path: Path, net: Net, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ssl

    cert, key = _self_signed(tmp_path, "docs.example")
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # the client trusts this certificate
    server_names: list[str | None] = []
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    context.sni_callback = lambda sock, name, ctx: server_names.append(name)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(2)
        net.public = Server(listener.getsockname()[1], {})

        def answer(times: int) -> None:
            for _ in range(times):
                conn, _ = listener.accept()
                try:
                    with context.wrap_socket(conn, server_side=True) as tls:
                        request = b""
                        while b"\r\n\r\n" not in request:
                            request += tls.recv(4096)
                        tls.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nsecure")
                except (ssl.SSLError, OSError):
                    conn.close()  # the client refused the certificate

        thread = threading.Thread(target=answer, args=(2,), daemon=True)
        thread.start()
        net.names.update({"docs.example": [[PUBLIC]], "other.example": [[PUBLIC]]})
        assert fetch_url("https://docs.example/", None) == "secure"
        # the same address under another name: the certificate does not match it
        with pytest.raises(FetchError, match="certificate"):
            fetch_url("https://other.example/", None)
        thread.join(60)
    assert server_names == ["docs.example", "other.example"]
    assert [ip for ip, _ in net.connections] == [PUBLIC, PUBLIC]
