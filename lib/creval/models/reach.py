"""Where a server spec's requests go and which key they may carry: a spec without ``base_url`` is OpenAI's API,
decided here once (:func:`endpoints`); a key goes only to the host it belongs to (:func:`api_key_for`)."""
from __future__ import annotations

import os

import httpx

from creval.core.errors import CrevalError
from creval.models.spec import ModelSpec

OPENAI_URL = "https://api.openai.com/v1"
OPENAI_HOST = "api.openai.com"


def endpoints(spec: ModelSpec) -> tuple[str, ...]:
    """The base URLs a server spec's requests go to: its ``base_url`` replicas, or OpenAI's API when it names none."""
    return spec.urls or (OPENAI_URL,)


def host_of(url: str) -> str:
    return (httpx.URL(url).host or "").lower()


def api_key_for(spec: ModelSpec) -> str:
    """The key this spec may send, or "" for none. A key only goes to the host it belongs to:
    ``OPENAI_API_KEY`` only to api.openai.com (never to a custom ``base_url``); another host gets the
    spec's own ``api_key_env`` or no ``Authorization`` header at all."""
    hosts = {host_of(u) for u in endpoints(spec)}
    host = next(iter(hosts)) if len(hosts) == 1 else ",".join(sorted(hosts))
    env = spec.api_key_env or ("OPENAI_API_KEY" if host == OPENAI_HOST else "")
    if not env:
        return ""                                   # a local/custom server: send no key
    if env == "OPENAI_API_KEY" and host != OPENAI_HOST:
        raise CrevalError(f"model {spec.name}: the spec would send OPENAI_API_KEY to {host}, which is not OpenAI's "
                          "endpoint", "put that server's own key in another variable and name it in the spec "
                                      "(api_key_env: MY_SERVER_KEY), or drop api_key_env if it needs none")
    key = os.environ.get(env, "")
    if not key:
        raise CrevalError(f"model {spec.name} needs an API key in {env}, which is not set", f"export {env}=...")
    return key


def check_server(spec: ModelSpec) -> tuple[bool, str]:
    """A server spec is usable when the key it names is set and may go to its host (no request is sent)."""
    if spec.api_key_env and not os.environ.get(spec.api_key_env):
        return False, f"set {spec.api_key_env}"
    api_key_for(spec)                               # the key's variable is set and may go to this host
    return True, ", ".join(endpoints(spec))
