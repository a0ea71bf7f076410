"""Commands the person declared for a repository, what the model proposed, and each run.

Declared commands live here, in acdc's own database, never in a file of the working tree
the model could edit. A command is an argv (a JSON list), run without a shell unless the
person wrote one. A proposal is the model's request to run an exact argv; it stays pending
until the person answers it. A run keeps its output whole up to a cap (`CommandRun.output`,
`chat.repo.commands.runner.STORED_BYTES`).
"""

from __future__ import annotations

from django.db import models

from history.models.sessions import Session

DEFAULT_TIMEOUT_SECONDS = 120


class DeclaredCommand(models.Model):
    """A named command the person allowed the model to run in `repository`."""

    repository = models.CharField(max_length=1024)
    name = models.CharField(max_length=40)
    argv = models.JSONField()  # a list of strings, exactly as the person gave it
    timeout_seconds = models.PositiveIntegerField(default=DEFAULT_TIMEOUT_SECONDS)
    network = models.BooleanField(default=False)  # the sandbox keeps the network for it
    # Absolute paths outside the work tree its runs also see, read-only (`--read PATH`).
    read_paths = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["repository", "name"], name="command_repo_name")
        ]

    def __str__(self) -> str:
        return f"{self.name}: {self.argv}"


class CommandProposal(models.Model):
    """An exact argv the model asked to run, with its reason, waiting for the person."""

    class Status(models.TextChoices):
        PENDING = "pending"
        APPROVED = "approved"
        DENIED = "denied"
        STOPPED = "stopped"  # its turn was stopped while it waited: nothing ran

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="proposals")
    turn_id = models.CharField(max_length=40, blank=True)
    call_id = models.CharField(max_length=255, blank=True)
    argv = models.JSONField()
    reason = models.TextField(blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    created_at = models.DateTimeField(auto_now_add=True)
    # The run the person's approval started (Run once, Always allow), once it has ended.
    run = models.ForeignKey(
        "CommandRun", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.session_id} {self.argv} {self.status}"


class CommandRun(models.Model):
    """One run of a command: what ran, how it ended, and its output (merged, capped)."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="command_runs")
    turn_id = models.CharField(max_length=40, blank=True)
    name = models.CharField(max_length=40, blank=True)  # the declared name, if any
    argv = models.JSONField()
    exit_code = models.IntegerField(null=True, blank=True)  # None: killed or not started
    ending = models.CharField(max_length=16)  # exited | timeout | cancelled | failed
    duration_ms = models.PositiveIntegerField(default=0)
    sandboxed = models.BooleanField(default=False)
    output = models.TextField(blank=True)  # stdout and stderr in order, up to the cap
    output_bytes = models.BigIntegerField(default=0)  # all the command printed
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.session_id} {self.argv} {self.ending} {self.exit_code}"


class ToolApproval(models.Model):
    """A call of an MCP tool that is not read-only, waiting for the person's answer; an
    answer of "always" is also what lets that tool of the session run from then on."""

    class Status(models.TextChoices):
        PENDING = "pending"
        ONCE = "once"  # Run once
        ALWAYS = "always"  # Always allow this tool (in this session)
        DENIED = "denied"
        STOPPED = "stopped"  # its turn was stopped while it waited: nothing ran
        EXPIRED = "expired"  # nobody answered in time: nothing ran

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="tool_approvals")
    turn_id = models.CharField(max_length=40, blank=True)
    call_id = models.CharField(max_length=255, blank=True)
    tool = models.CharField(max_length=200)  # mcp__<server>__<tool>
    arguments = models.JSONField(default=dict)
    annotations = models.JSONField(default=dict)  # as the server gave them, shown only
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["session", "tool", "status"], name="approval_lookup")]

    def __str__(self) -> str:
        return f"{self.session_id} {self.tool} {self.status}"
