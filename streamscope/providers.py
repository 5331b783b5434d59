"""The providers streamscope records and plays back, one record each: faces iterate them.

A `Provider` is whose clients an agent runs (OpenAI, Anthropic, Google, Ollama): the
dialects they speak, how their SDKs name themselves, where `serve` and the playback
fixtures put their base URL, the demo agent of each dialect. Each of its `Side`s is one
base URL those clients are given on the recording proxy: its mount, the environment
variables `record` points at it, its default upstream and its CLI option. The proxy, the
runner, the CLI options, `serve`, playback and the pytest plugin ask these records;
none of them names a provider. Adding one is a record here (and its dialect's package).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from .core.record import record
from .http import sigv4

if TYPE_CHECKING:
    from .dialects import Dialect


def _same(value: str) -> str:
    return value


class CannotSign(Exception):
    """A side's `resign` cannot sign a request for its upstream: one line saying what is
    missing (botocore, credentials)."""


# A side's re-signing (Side.resign): (method, the upstream URL, the headers the proxy sends
# but Host and Content-Length, which it frames itself from the URL and the body, the body)
# -> the headers to send instead; None: the request carries no signature to make again.
Resign = Callable[[str, str, list[tuple[str, str]], bytes], "list[tuple[str, str]] | None"]


@record(frozen=True, slots=True)
class Placeholder:
    """A credential a side's SDKs refuse to start without: where the environment has
    none of `names` (the variables they read it from, any one), `value` under the first.
    Given only where the side points at a local mock (`demo`, `conformance`), which
    checks none: nothing leaves the machine."""

    names: tuple[str, ...]
    value: str


@record(frozen=True, slots=True)
class Side:
    """One base URL of a provider's clients on the recording proxy."""

    name: str  # "openai", "gemini", "vertex": what the proxy calls it
    clients: str  # whose requests come this way: "Gemini API clients'"
    mount: str  # where it lives on the proxy; "": every path no other side takes
    env: tuple[str, ...]  # the variables `record` points at it
    option: str  # its CLI option: "--gemini-upstream"
    default_upstream: str | None  # None: the origin each request's path names (origin_of)
    upstream_env: str | None = None  # read first for the default upstream
    # that variable's value as an upstream URL (OLLAMA_HOST may be `host:port`)
    upstream_of_env: Callable[[str], str] = _same
    # The origin a request names, from its path and its headers (names in lower case):
    # Vertex AI's region in its path, Bedrock's in its signature (ValueError: none), where
    # no upstream is given: None for a side that always has one.
    origin_of: Callable[[str, Mapping[str, str]], str] | None = None
    default_said: str = ""  # how the help says a default that is no URL
    origin_said: str = ""  # how `record` says it sends each request to its own origin
    # Its clients sign each request for the host they were given (AWS SigV4), which the
    # upstream checks: the proxy signs it again for its upstream (None: sent as it came).
    resign: Resign | None = None
    # What its SDKs need to start against a local mock (`placeholder_credentials`).
    placeholders: tuple[Placeholder, ...] = ()

    @property
    def param(self) -> str:
        """Its option's parameter name: `--gemini-upstream` -> `gemini_upstream`."""
        return self.option.lstrip("-").replace("-", "_")

    def help(self) -> str:
        """Its CLI option's help."""
        default = self.default_upstream or self.default_said
        if self.upstream_env is not None:
            default = f"${self.upstream_env}, else {default}"
        return (
            f"Where {self.clients} requests go ({self.env[0]}); its path prefix is kept. "
            f"Default: {default}."
        )

    def upstream(self, given: str | None, environ: dict[str, str]) -> str | None:
        """The upstream URL: the one given, else its variable's, else its default
        (None: the origin each request names)."""
        if given:
            return given
        told = environ.get(self.upstream_env) if self.upstream_env else None
        return self.upstream_of_env(told) if told else self.default_upstream


@record(frozen=True, slots=True)
class DemoAgent:
    """A small tool loop on one of a provider's SDKs, which `streamscope demo` records
    against a served sample of its dialect. It is given the sample's first request
    (AGENT_REQUEST: its JSON body, a session's message that opened its first turn;
    AGENT_URL: its URL; AGENT_MODEL: its model, as the dialect reads it) and takes from it
    what its API needs (streamscope/demo/sample.py)."""

    dialect: str  # the dialect it speaks, by name
    argv: tuple[str, ...]  # its `python -m` arguments
    sdk: str = "openai"  # the distribution it runs on, as pip installs it
    imports: str = "openai"  # the module it needs that may be missing (its SDK's, else)
    pip: str = ""  # what `pip install` installs it with ("": its SDK's name)
    # It talks over a WebSocket session: the agent of the samples that are one (a dialect
    # spoken both ways, as the Responses API is, has one agent of each).
    session: bool = False

    def installed(self) -> bool:
        """Whether its SDK is installed (only the agent imports it)."""
        try:
            return importlib.util.find_spec(self.imports) is not None
        except ModuleNotFoundError:  # (a parent package missing: `google` of google.genai)
            return False


@record(frozen=True, slots=True)
class Provider:
    name: str  # "openai", "anthropic", "google", "ollama"
    title: str  # "OpenAI", "Google"
    client: str  # one of its clients, in a sentence: "a Gemini or Vertex AI client"
    dialects: tuple[str, ...]  # the dialects its clients speak, by name
    sides: tuple[Side, ...]
    # What its clients' base URL ends in on `serve` and in the playback fixtures (the
    # SDKs append the rest of the API's path).
    serve_path: str = ""
    # Header names and User-Agent prefixes its own SDKs send (the pytest plugin records
    # what they send, not other HTTP traffic).
    sdk_headers: frozenset[str] = frozenset()
    user_agents: tuple[str, ...] = ()
    # Its dialects' paths are its API's alone (Gemini's methods): a request to one is its
    # client's, whoever sends it.
    own_paths: bool = False
    # The demo agent of each of its dialects.
    demo_agents: tuple[DemoAgent, ...] = ()

    def speaks(self) -> list[Dialect]:
        """Its dialects that are registered, in its order."""
        from .dialects import DIALECTS  # (the records load before the dialects: the CLI's)

        return [DIALECTS[n] for n in self.dialects if n in DIALECTS]

    def demo_agent(self, dialect: str, session: bool = False) -> DemoAgent | None:
        """The agent of a sample of this dialect, over HTTP or (session) a WebSocket."""
        return next(
            (a for a in self.demo_agents if a.dialect == dialect and a.session == session), None
        )

    def sends(self, headers: dict[str, str]) -> bool:
        """Whether a request with these headers (names in lower case) is one of its SDKs'."""
        agent = headers.get("user-agent", "")
        return not self.sdk_headers.isdisjoint(headers) or (
            bool(self.user_agents) and agent.startswith(self.user_agents)
        )


# -- Vertex AI's regions --------------------------------------------------------------

# `global` (and a path that names no location, as express mode's
# `/v1beta1/publishers/google/models/...`) at aiplatform.googleapis.com, the multi-regions
# at their representative endpoints, every region at {location}-aiplatform.googleapis.com.
VERTEX_GLOBAL = "https://aiplatform.googleapis.com"
_MULTI_REGIONS = frozenset({"us", "eu"})
# A location is a host label here: nothing else may reach the origin.
_LOCATION = re.compile(r"[a-z][a-z0-9-]{0,62}")


VERTEX_AI = "Vertex AI"


def vertex_request(url: str | None) -> bool:
    """Whether a Gemini request goes to Vertex AI, not the Gemini API: its model is a
    publisher's (`.../publishers/google/models/...`)."""
    return url is not None and "/publishers/" in url


def vertex_origin(path: str, headers: Mapping[str, str] | None = None) -> str:
    """The Vertex AI origin for a request path, from its `/locations/{location}/` segment.
    ValueError for a location that is no region name."""
    parts = path.split("?", 1)[0].split("/")
    try:
        location = parts[parts.index("locations", 1) + 1]
    except (ValueError, IndexError):
        return VERTEX_GLOBAL
    if location == "global":
        return VERTEX_GLOBAL
    if _LOCATION.fullmatch(location) is None or location.endswith("-"):
        raise ValueError(f"location {location[:64]!r} in the path is no Vertex AI region")
    if location in _MULTI_REGIONS:
        return f"https://aiplatform.{location}.rep.googleapis.com"
    return f"https://{location}-aiplatform.googleapis.com"


# -- Amazon Bedrock's regions -----------------------------------------------------------


# The runtime's operations (InvokeModel*, Converse*, CountTokens, ApplyGuardrail, async
# invocations); every other path is the control plane's (ListInferenceProfiles,
# GetFoundationModel...), which Claude Code asks through the same base URL. Both sign as
# service `bedrock`.
_RUNTIME = ("/model/", "/guardrail/", "/async-invoke")


def bedrock_origin(path: str, headers: Mapping[str, str] | None = None) -> str:
    """The Bedrock endpoint of the region a request was signed for (its SigV4 credential
    scope), else of AWS_REGION / AWS_DEFAULT_REGION (a request with a Bedrock API key,
    `Authorization: Bearer`, names none): the runtime's for its operations, the control
    plane's for the rest. ValueError: no region, or one that is no region name."""
    signed = sigv4.parse((headers or {}).get("authorization", ""))
    region = signed.region if signed is not None else None
    if region is None:
        region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    if not region:
        raise ValueError(
            "no AWS region: the request's signature names none, and neither AWS_REGION "
            "nor AWS_DEFAULT_REGION is set (or give --bedrock-upstream)"
        )
    if _LOCATION.fullmatch(region) is None or region.endswith("-"):
        raise ValueError(f"region {region[:64]!r} is no AWS region")
    runtime = path.startswith(_RUNTIME) or path.rstrip("/") == "/async-invoke"
    return f"https://bedrock{'-runtime' if runtime else ''}.{region}.amazonaws.com"


def _resign_sigv4(
    method: str, url: str, headers: list[tuple[str, str]], body: bytes
) -> list[tuple[str, str]] | None:
    from .record.sigv4 import resign  # botocore, only when a request is signed

    return resign(method, url, headers, body)


# -- Ollama's host ----------------------------------------------------------------------

OLLAMA_PORT = 11434


def ollama_host_url(host: str) -> str:
    """OLLAMA_HOST as a URL, as the ollama clients read it: `host:port`, `:port`, a bare
    host or a URL; http and port 11434 unless it names them (80 or 443 for a URL that
    names only its scheme), host 127.0.0.1 when it names none; its path kept."""
    host = host.strip()
    scheme, sep, rest = host.partition("://")
    port = OLLAMA_PORT
    if not sep:
        scheme, rest = "http", host
    elif scheme in ("http", "https"):
        port = 80 if scheme == "http" else 443
    parts = urlsplit(f"{scheme}://{rest}")
    with contextlib.suppress(ValueError):  # not a port: as the clients do, the default
        port = parts.port or port
    name = parts.hostname or "127.0.0.1"
    if ":" in name:  # an IPv6 address
        name = f"[{name}]"
    path = parts.path.strip("/")
    return f"{scheme}://{name}:{port}" + (f"/{path}" if path else "")


# -- the records --------------------------------------------------------------------------


def _openai_websocket_agent(dialect: str, module: str) -> DemoAgent:
    """An agent on one of the openai SDK's WebSocket clients (responses.connect,
    realtime.connect): they need websockets, which neither openai nor streamscope
    installs (openai's `realtime` extra does)."""
    return DemoAgent(
        dialect, (module,), imports="websockets", pip="'openai[realtime]'", session=True
    )


OPENAI = Provider(
    "openai",
    "OpenAI",
    "an OpenAI client",
    ("chat-completions", "openai-responses", "openai-realtime"),
    (
        Side(
            "openai",
            "OpenAI clients'",
            "",
            ("OPENAI_BASE_URL", "OPENAI_API_BASE"),  # the second: LangChain's, litellm's
            "--upstream",
            "https://api.openai.com/v1",
            "OPENAI_BASE_URL",
            placeholders=(Placeholder(("OPENAI_API_KEY",), "sk-streamscope-placeholder"),),
        ),
    ),
    serve_path="/v1",
    sdk_headers=frozenset({"x-stainless-lang"}),
    user_agents=("OpenAI/",),
    demo_agents=(
        DemoAgent("chat-completions", ("streamscope.demo.agent", "create")),
        DemoAgent("openai-responses", ("streamscope.demo.responses_agent",)),
        # (their sessions need the recorder's and serve's WebSocket sides)
        _openai_websocket_agent("openai-responses", "streamscope.demo.responses_ws_agent"),
        _openai_websocket_agent("openai-realtime", "streamscope.demo.realtime_agent"),
    ),
)
ANTHROPIC = Provider(
    "anthropic",
    "Anthropic",
    "an Anthropic client",
    ("anthropic-messages",),
    (
        Side(
            "anthropic",
            "Anthropic clients'",
            "/anthropic",
            ("ANTHROPIC_BASE_URL",),
            "--anthropic-upstream",
            "https://api.anthropic.com",
            "ANTHROPIC_BASE_URL",
            placeholders=(
                Placeholder(
                    ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"), "sk-ant-streamscope-placeholder"
                ),
            ),
        ),
    ),
    sdk_headers=frozenset({"x-stainless-lang"}),
    user_agents=("Anthropic/",),
    demo_agents=(
        DemoAgent(
            "anthropic-messages", ("streamscope.demo.anthropic_agent",), "anthropic", "anthropic"
        ),
    ),
)
# Honoured alike by the google-genai Python SDK, the @google/genai JS SDK and the Gemini
# CLI: the Gemini API's base URL, and Vertex AI's.
GOOGLE = Provider(
    "google",
    "Google",
    "a Gemini or Vertex AI client",
    ("gemini",),
    (
        Side(
            "gemini",
            "Gemini API clients'",
            "/gemini",
            ("GOOGLE_GEMINI_BASE_URL",),
            "--gemini-upstream",
            "https://generativelanguage.googleapis.com",
            "GOOGLE_GEMINI_BASE_URL",
            # (google-genai reads either; with both set it says so on every client)
            placeholders=(
                Placeholder(("GEMINI_API_KEY", "GOOGLE_API_KEY"), "streamscope-placeholder"),
            ),
        ),
        Side(
            "vertex",
            "Vertex AI clients'",
            "/vertex",
            ("GOOGLE_VERTEX_BASE_URL",),
            "--vertex-upstream",
            None,
            "GOOGLE_VERTEX_BASE_URL",
            origin_of=vertex_origin,
            default_said="the region each request names (https://LOCATION-aiplatform.googleapis.com)",
            origin_said="Vertex AI (the region each request names)",
        ),
    ),
    own_paths=True,
    demo_agents=(
        DemoAgent("gemini", ("streamscope.demo.gemini_agent",), "google-genai", "google.genai"),
    ),
)
# OLLAMA_HOST with a path: ollama-python keeps it (`_parse_host`), and so does the Go
# client (`envconfig.Host()` keeps it, `base.JoinPath` appends the API's); Go clients
# older than that built the base from scheme and host only, and would miss the mount.
OLLAMA = Provider(
    "ollama",
    "Ollama",
    "an Ollama client",
    ("ollama-chat",),
    (
        Side(
            "ollama",
            "Ollama clients'",
            "/ollama",
            ("OLLAMA_HOST",),
            "--ollama-upstream",
            f"http://127.0.0.1:{OLLAMA_PORT}",
            "OLLAMA_HOST",
            upstream_of_env=ollama_host_url,
        ),
    ),
    # ollama-python's and the Go client's (`ollama/0.x (arch os) Go/...`)
    user_agents=("ollama-python/", "ollama/"),
    demo_agents=(DemoAgent("ollama-chat", ("streamscope.demo.ollama_agent",), "ollama", "ollama"),),
)

# Bedrock's clients sign each request (SigV4) for the host they were given: the proxy's
# side signs it again for the real one, with the credentials of the environment
# (record/sigv4.py). AWS_ENDPOINT_URL_BEDROCK_RUNTIME is botocore's (and every AWS SDK's)
# service-specific endpoint variable; ANTHROPIC_BEDROCK_BASE_URL is the anthropic SDK's
# AnthropicBedrock's and Claude Code's (CLAUDE_CODE_USE_BEDROCK=1).
AWS = Provider(
    "aws",
    "Amazon Bedrock",
    "an Amazon Bedrock client",
    ("bedrock-converse",),
    (
        Side(
            "bedrock",
            "Amazon Bedrock clients'",
            "/bedrock",
            ("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "ANTHROPIC_BEDROCK_BASE_URL"),
            "--bedrock-upstream",
            None,
            "AWS_ENDPOINT_URL_BEDROCK_RUNTIME",
            origin_of=bedrock_origin,
            default_said=(
                "the region each request is signed for "
                "(https://bedrock-runtime.REGION.amazonaws.com); each request is signed "
                "again for it with the environment's AWS credentials"
            ),
            origin_said="Amazon Bedrock (the region each request is signed for)",
            resign=_resign_sigv4,
            # an AWS SDK signs every request, and builds no client without a region
            placeholders=(
                Placeholder(("AWS_ACCESS_KEY_ID",), "streamscope-placeholder"),
                Placeholder(("AWS_SECRET_ACCESS_KEY",), "streamscope-placeholder"),
                Placeholder(("AWS_REGION", "AWS_DEFAULT_REGION"), "us-east-1"),
            ),
        ),
    ),
    demo_agents=(
        DemoAgent("bedrock-converse", ("streamscope.demo.bedrock_agent",), "boto3", "boto3"),
    ),
)

PROVIDERS: tuple[Provider, ...] = (OPENAI, ANTHROPIC, GOOGLE, OLLAMA, AWS)
# The side that takes every path no other side's mount does (the OpenAI one).
DEFAULT_SIDE = OPENAI.sides[0]


def sides() -> Iterator[tuple[Provider, Side]]:
    """Every side of every provider, the default one first."""
    for provider in PROVIDERS:
        for side in provider.sides:
            yield provider, side


def placeholder_credentials(pointed: Iterable[Side], environ: Mapping[str, str]) -> dict[str, str]:
    """The placeholder credentials of the sides `pointed` at a local mock, each where
    `environ` has none of its own (Side.placeholders)."""
    return {
        p.names[0]: p.value
        for side in pointed
        for p in side.placeholders
        if not any(environ.get(name) for name in p.names)
    }


def side(name: str) -> Side:
    """The side named `name` (KeyError: none is)."""
    for _, s in sides():
        if s.name == name:
            return s
    raise KeyError(name)


def provider_of_side(name: str) -> Provider:
    for provider, s in sides():
        if s.name == name:
            return provider
    raise KeyError(name)


def env_names() -> list[str]:
    """Every variable `record` sets, side by side."""
    return [name for _, s in sides() for name in s.env]


def provider_of(dialect: str | None) -> Provider | None:
    """The provider whose clients speak the dialect named `dialect` (None: none does)."""
    return next((p for p in PROVIDERS if dialect in p.dialects), None)


def sdk_client(headers: dict[str, str]) -> bool:
    """Whether a request with these headers (names in lower case) comes from a provider's
    SDK, or from a client of a dialect that alone sends one of them (`anthropic-version`)."""
    from .dialects import DIALECTS

    if any(p.sends(headers) for p in PROVIDERS):
        return True
    return any(not d.client_headers.isdisjoint(headers) for d in DIALECTS.values())


def owns_path(path: str) -> bool:
    """Whether a request path is one a provider owns alone (`own_paths`)."""
    from .dialects import claimant

    told = claimant(path, None)
    return told is not None and any(p.own_paths and told in p.speaks() for p in PROVIDERS)


# -- the provider as the GenAI semantic conventions name it (`export --format otlp`) ----

# Hosts of an API whose provider has a name of its own there, whatever dialect it serves
# (a host and its subdomains).
GEN_AI_HOSTS: tuple[tuple[str, str], ...] = (
    ("api.openai.com", "openai"),
    ("openai.azure.com", "azure.ai.openai"),
    ("api.anthropic.com", "anthropic"),
    ("generativelanguage.googleapis.com", "gcp.gemini"),
    ("api.deepseek.com", "deepseek"),
    ("api.groq.com", "groq"),
    ("api.mistral.ai", "mistral_ai"),
    ("api.x.ai", "x_ai"),
    ("api.perplexity.ai", "perplexity"),
    ("api.cohere.com", "cohere"),
    ("api.cohere.ai", "cohere"),
)
# Else the provider whose API the dialect is (its clients' wire format, as the conventions
# say: a gateway serving Chat Completions is `openai`).
GEN_AI_NAMES = {
    "openai": "openai",
    "anthropic": "anthropic",
    "google": "gcp.gen_ai",
    "aws": "aws.bedrock",
}


def gen_ai_provider(url: str, dialect: str | None) -> str:
    """`gen_ai.provider.name` of a request to `url` in `dialect`: the API's host where it
    names one, Vertex AI's where the request goes there, else the provider of the dialect
    (Ollama's own name where it is one; `_OTHER` where no provider speaks it)."""
    host = (urlsplit(url).hostname or "").lower()
    if vertex_request(url):
        return "gcp.vertex_ai"
    if host.startswith("bedrock") and host.endswith(".amazonaws.com"):
        return "aws.bedrock"
    for known, name in GEN_AI_HOSTS:
        if host == known or host.endswith("." + known):
            return name
    provider = provider_of(dialect)
    if provider is None:
        return "_OTHER"
    return GEN_AI_NAMES.get(provider.name, provider.name)
