"""The header's model chooser: which model a session's next message goes to.

GET renders the chooser as it is; POST saves `Session.model`, which every turn reads when the
composer names no model, so the choice holds for the next message and after a restart.
Any model name litellm might know is accepted; only a clearly malformed one (empty, with
spaces or control characters, longer than the column) is refused, as a message in the
fragment. A name litellm's map lacks is saved but said at once ("sent as is; window and
prices unknown"), with the nearest known name offered when one is close. The suggestions
are the offline models, the defaults of the providers whose keys are set, and those
providers' chat models from litellm's cost map -- read from its bundled file (no litellm
import), listed once, in a thread, so that rendering the page never waits for it.
"""

from __future__ import annotations

import difflib
import functools
import logging
import os
from collections.abc import Mapping

from django.apps import apps
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from chat.llm import costmap
from chat.llm.costmap import MAX_SUGGESTIONS, ModelListings
from chat.llm.facts import OFFLINE_MODELS, PROVIDER_KEYS
from chat.llm.runtime import chat_model
from chat.session import Wiring, setchanges
from chat.web.broadcast import announce
from history import selectors
from history.models import Session

log = logging.getLogger(__name__)

MAX_MODEL_CHARS = Session._meta.get_field("model").max_length or 200
SWITCH_NOTICE = (
    "Takes effect on the next message; the cached prefix is rebuilt at the new model's prices."
)
# How alike a typed name and a known one must be (difflib's ratio) to offer the known one.
CLOSE_ENOUGH = 0.85


@require_http_methods(["GET", "POST"])
def model_choose(request: HttpRequest, session_id: str) -> HttpResponse:
    session = selectors.session_get(session_id=session_id)
    if session is None:
        raise Http404("no such session")
    if request.method == "GET":
        return _chooser(request, session)
    chosen = request.POST.get("model", "")
    error = model_refusal(chosen)
    if error:
        return _chooser(request, session, error=error)
    chosen = chosen.strip()
    if chosen != session.model:
        Session.objects.filter(pk=session.pk).update(model=chosen)
        session.model = chosen
        _follow_model(session.id, apps.get_app_config("chat").served)
    # Against what the page showed, not the row: a second request of the same change
    # (Enter fires `change` and `submit`) still says what the change does.
    switched = chosen != request.POST.get("shown", chosen)
    return _chooser(request, session, switched=switched)


def _follow_model(session_id: str, wiring: Wiring) -> None:
    """The Context panel measures against the new model's window, in every tab."""
    try:
        setchanges.refresh_sets(session_id, wiring)
    except Exception:  # the choice stands; the panel catches up at the next turn
        log.exception("the HUD of session %s did not follow its new model", session_id)
    announce(session_id)


def model_refusal(name: str) -> str:
    """Why `name` cannot be a model name, or "" when it may be one."""
    name = name.strip()
    if not name:
        return "Name a model, for example acdc/fake or anthropic/claude-sonnet-4-5."
    if len(name) > MAX_MODEL_CHARS:
        return f"A model name is at most {MAX_MODEL_CHARS} characters; this one has {len(name):,}."
    if any(c.isspace() or not c.isprintable() for c in name):
        return "A model name has no spaces or control characters."
    return ""


def _chooser(
    request: HttpRequest, session: Session, *, error: str = "", switched: bool = False
) -> HttpResponse:
    model = chat_model(session.model)
    unknown, nearest = ("", "") if error else model_check(model)
    context = {
        "session": session,
        "model": model,
        "unknown": unknown,
        "nearest": nearest,
        "default_model": chat_model(),
        "suggestions": model_suggestions(os.environ, apps.get_app_config("chat").served.models),
        "model_error": error,
        "model_notice": SWITCH_NOTICE if switched else "",
        "max_chars": MAX_MODEL_CHARS,
    }
    return render(request, "chat/_model_chooser.html", context)


def model_check(name: str) -> tuple[str, str]:
    """What to say of a model litellm's map does not know ("" when it knows it), and the
    known name nearest to it ("" when none is close: a misspelling gets one, a new name not)."""
    if name in OFFLINE_MODELS:
        return "", ""
    try:
        costmap.model_info(name)
        return "", ""
    except Exception:
        pass
    said = f"litellm does not know {name}: it will be sent as is; window and prices unknown."
    if name.startswith("acdc/"):
        known: tuple[str, ...] = OFFLINE_MODELS
    else:
        known = known_models()
    close = difflib.get_close_matches(name, known, n=1, cutoff=CLOSE_ENOUGH)
    return said, close[0] if close else ""


@functools.cache
def known_models() -> tuple[str, ...]:
    """Every chat model of litellm's map, under its key and as `provider/key`."""
    names: set[str] = set()
    for key, entry in costmap.entries().items():
        if not isinstance(entry, Mapping) or entry.get("mode") != "chat" or key.startswith("ft:"):
            continue
        names.add(key)
        provider = entry.get("litellm_provider")
        if isinstance(provider, str) and not key.startswith(f"{provider}/"):
            names.add(f"{provider}/{key}")
    return tuple(sorted(names))


# -- suggestions --------------------------------------------------------------------------


def model_suggestions(env: Mapping[str, str], listings: ModelListings) -> list[str]:
    """Offline models, the configured default, each keyed provider's default, then (once
    `listings` has them) the keyed providers' chat models from litellm's cost map; at most
    200."""
    keyed = [model for key, model in PROVIDER_KEYS if env.get(key)]
    providers = tuple(model.split("/", 1)[0] for model in keyed)
    listed = listings.models(providers) if providers else ()
    names = [*OFFLINE_MODELS, chat_model(), *keyed, *listed]
    return list(dict.fromkeys(names))[:MAX_SUGGESTIONS]
