from __future__ import annotations

from django.urls import path

from chat.web import views, views_commands, views_context, views_live, views_mcp, views_model
from chat.web.branches import views as views_branches
from chat.web.edits import commit_view
from chat.web.edits import views as views_edits
from chat.web.views_proposals import proposal_answer

app_name = "chat"
urlpatterns = [
    path("", views.index, name="index"),
    path("s/new/", views.session_new, name="session_new"),
    path("live/", views_live.live_probe, name="live_probe"),
    path("s/<str:session_id>/", views.session_page, name="session"),
    path("s/<str:session_id>/images/", views.image_upload, name="image_upload"),
    path("s/<str:session_id>/tools/", views_context.session_tools, name="session_tools"),
    path(
        "s/<str:session_id>/checkpoints/",
        views_context.checkpoint_create,
        name="checkpoint_create",
    ),
    path(
        "s/<str:session_id>/checkpoints/<str:checkpoint_id>/rollback/",
        views_context.checkpoint_rollback,
        name="checkpoint_rollback",
    ),
    path(
        "s/<str:session_id>/compaction/undo/",
        views_context.compaction_undo,
        name="compaction_undo",
    ),
    path("m/<str:message_id>/show/", views_branches.version_show, name="version_show"),
    path("m/<str:message_id>/fork/", views_branches.session_fork, name="fork"),
    path("m/<str:message_id>/pin/", views_context.message_pin, name="message_pin"),
    path("s/<str:session_id>/files.json", views_context.files_json, name="files_json"),
    path("s/<str:session_id>/files/rows/", views_context.files_rows, name="files_rows"),
    path("s/<str:session_id>/files/pin/", views_context.file_pin, name="file_pin"),
    path("s/<str:session_id>/symbols.json", views_context.symbols_json, name="symbols_json"),
    path(
        "s/<str:session_id>/instructions/",
        views_context.instructions_toggle,
        name="instructions_toggle",
    ),
    path(
        "s/<str:session_id>/suggestions/",
        views_context.suggestions_choose,
        name="suggestions_choose",
    ),
    path(
        "s/<str:session_id>/grounding/",
        views_context.grounding_toggle,
        name="grounding_toggle",
    ),
    path("s/<str:session_id>/endless/", views_context.endless_choose, name="endless_choose"),
    path("s/<str:session_id>/model/", views_model.model_choose, name="model_choose"),
    path("m/<str:message_id>/edits/", views_edits.edits_act, name="edits_act"),
    path("s/<str:session_id>/auto-apply/", views_edits.auto_apply, name="auto_apply"),
    path("s/<str:session_id>/check/", views_edits.check_after_apply, name="check_after_apply"),
    path("s/<str:session_id>/commit/", commit_view.edits_commit, name="edits_commit"),
    path("s/<str:session_id>/commands/", views_commands.commands_part, name="commands"),
    path("s/<str:session_id>/commands/add/", views_commands.command_add, name="command_add"),
    path(
        "s/<str:session_id>/commands/remove/",
        views_commands.command_remove,
        name="command_remove",
    ),
    path("s/<str:session_id>/commands/check/", views_commands.command_check, name="command_check"),
    path("s/<str:session_id>/mcp/", views_mcp.mcp_part, name="mcp"),
    path("s/<str:session_id>/mcp/add/", views_mcp.mcp_add, name="mcp_add"),
    path("s/<str:session_id>/mcp/remove/", views_mcp.mcp_remove, name="mcp_remove"),
    path("s/<str:session_id>/mcp/switch/", views_mcp.mcp_switch, name="mcp_switch"),
    path(
        "approvals/<str:approval_id>/answer/",
        views_mcp.approval_answer,
        name="approval_answer",
    ),
    path(
        "proposals/<str:proposal_id>/answer/",
        proposal_answer,
        name="proposal_answer",
    ),
    path("images/<str:sha>/", views.image_file, name="image"),
    path("images/<str:sha>/thumb/", views.image_thumb, name="image_thumb"),
    path("images/<str:sha>/chip/", views.image_chip, name="image_chip"),
]
