"""Names vulture cannot see used, each group with who uses it (vulture's whitelist format).

`vulture acdc chat history contextcore bench vulture_allow.py --min-confidence 60` reads
this file as one more module: every name below counts as used. Nothing imports or runs it.
A name goes here only when a framework, a template or a named interface reaches it;
product code that nothing calls is deleted instead (docs/development.md).
"""

from types import SimpleNamespace

_ = SimpleNamespace()

# Django reads its settings by name (acdc/settings.py).
_.SECRET_KEY, _.DEBUG, _.INSTALLED_APPS, _.MIDDLEWARE, _.ROOT_URLCONF, _.ASGI_APPLICATION
_.TEMPLATES, _.CHANNEL_LAYERS, _.DEFAULT_AUTO_FIELD, _.LANGUAGE_CODE, _.TIME_ZONE
_.USE_I18N, _.USE_TZ, _.STATIC_URL, _.STATICFILES_DIRS, _.WHITENOISE_USE_FINDERS
_.SESSION_COOKIE_SAMESITE, _.CSRF_COOKIE_SAMESITE, _.X_FRAME_OPTIONS, _.LOGGING

# Found by dotted path or by convention: the ASGI `application` (acdc.asgi, the bench's
# relay), URLconfs, app configs, the middleware classes MIDDLEWARE names and their hooks.
_.application, _.urlpatterns, _.app_name, _.ChatConfig, _.HistoryConfig, _.default_auto_field
_.AccessTokenMiddleware, _.ContentSecurityPolicyMiddleware, _.FaultMiddleware
_.UploadGuardMiddleware, _.ActMiddleware, _.process_view, _.process_exception
_._has_been_logged  # django.request's flag: a response said once is not logged again

# Models and migrations as Django reads them: Meta options, the migration classes' fields,
# the admin's classes and options (registered with @admin.register).
_.Meta, _.ordering, _.app_label, _.initial, _.dependencies, _.operations
_.SessionAdmin, _.MessageAdmin, _.TokenUsageAdmin, _.ContentObjectAdmin, _.ObjectVersionAdmin
_.SessionObjectAdmin, _.PendingEditAdmin, _.EditJournalAdmin
_.list_display, _.list_filter, _.search_fields, _.readonly_fields, _.raw_id_fields
_.inlines, _.show_change_link

# A custom model field's hooks (history/models/fields.py), called by the ORM; `expression`
# is a parameter of from_db_value's fixed signature.
_.get_db_prep_value, _.from_db_value, _.to_python, _.value_to_string, _.get_default
_.expression

# Signal receivers: Django passes `sender` by keyword, so the parameter keeps its name.
_.sender

# Stored columns written through create()/update() keywords or kept as a record (admin,
# exports): the ORM reads them, no Python attribute access does. RESTORE is a stored choice
# of EditJournal.purpose named in migration 0023.
_.turn_stop, _.undone_at, _.ended_at, _.output_bytes, _.RESTORE

# Read by templates only: edit cards and problems (chat/_edit_card.html,
# chat/_edit_problem.html), limits (chat/_commands.html), search hits
# (history/_results.html), and the template tags and filters loaded by name.
_.numbered, _.shown_problems, _.folded_problems, _.already, _.on_disk, _.located
_.holds, _.session_title, _.image_shas
_.reply_edits, _.edits_on, _.ago

# Channels: group messages of type "chat.frame", "panels.check", "turn.stop" and
# "turn.snapshot" call these consumer methods; Daphne's factory reads `protocol`.
_.chat_frame, _.panels_check, _.turn_stop, _.turn_snapshot, _.protocol

# pydantic: a model's `model_config`, and the JSON-schema generator's hook it overrides.
_.model_config, _.field_title_should_be_set

# litellm: CustomLLM.astreaming (the offline models) and its module switches.
_.astreaming, _.suppress_debug_info, _.drop_params, _.disable_streaming_logging

# The standard library and Pillow read these: http.server's handler methods and
# protocol_version (the wire fakes), socketserver's daemon_threads, urllib's opener
# headers, Pillow's decompression-bomb limit.
_.do_GET, _.do_POST, _.log_message, _.protocol_version, _.daemon_threads, _.addheaders
_.MAX_IMAGE_PIXELS

# aider's repo map calls these on the objects the bench's child hands it
# (bench/context/aider_map_child.py): its io's read_text(silent=…) and tool_* messages,
# its model's token_count.
_.token_count, _.silent, _.tool_warning, _.tool_error

# Seed 000's named interface of the context engine (FileContext.format_for_prompt,
# ContextManager.clear_history and get_token_budget), kept and tested as the seed lists.
_.format_for_prompt, _.clear_history, _.get_token_budget

# Records and counters whose fields tests read to see what happened: compaction outcomes'
# message counts, an edit result's `reanchored`, the model facts' `supports_vision`
# (from litellm's model info), the parse pool's `pooled`, the image gate's `entered`.
_.messages_before, _.messages_after, _.reanchored, _.supports_vision, _.pooled, _.entered

# Constants tests import: the context tools that change the sets (tests parametrize on
# them), the keep-alive request's metadata purpose they match.
_.SET_TOOLS, _.PURPOSE

# chat/repo/mcp/mcp_sdk.py is the one module that imports the MCP SDK; EXPORTED names
# what it re-exports so the imports read as used.
_.EXPORTED
