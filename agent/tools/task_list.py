"""Task-manager tools: a to-do list per user, stored in the database.

A user's tasks belong to their customer id, or to the conversation when the channel knows no
customer (the console). Tasks carry a number the user refers to ("mark 2 as done"); numbers are
never reused, so a number keeps naming the same task after another one is deleted.
"""

from __future__ import annotations

import hashlib
from typing import Literal

from pydantic import Field

from agent.domain.contexts import ToolContext
from agent.domain.records import TaskRecord
from agent.domain.types import RecordKind, SideEffect
from agent.errors import ToolError
from agent.storage import TaskReader
from agent.tools.registry import Tool, ToolDeps, ToolOutput, ToolParams, tool_factory


class AddTaskParams(ToolParams):
    title: str = Field(min_length=1, max_length=500, description="What to do, in the user's words")


class ListTasksParams(ToolParams):
    show: Literal["all", "open", "done"] = "all"


class TaskNumberParams(ToolParams):
    number: int = Field(ge=1, description="The task's number as shown in the list")


class UpdateTaskParams(TaskNumberParams):
    title: str = Field(min_length=1, max_length=500)


@tool_factory
def task_tools(deps: ToolDeps) -> list[Tool]:
    """The to-do tools; none when the storage keeps no task lists."""
    if deps.tasks is None:
        return []
    tasks = _TaskList(deps.tasks)
    changes: tuple[RecordKind, ...] = ("task_change",)
    return [
        Tool("add_task", "Add a task to the user's list.", AddTaskParams, tasks.add_task, records=("task",)),
        Tool("list_tasks", "Show the user's tasks.", ListTasksParams, tasks.list_tasks),
        Tool("update_task", "Change a task's description.", UpdateTaskParams, tasks.update_task, records=changes),
        Tool("complete_task", "Mark a task as done.", TaskNumberParams, tasks.complete_task, records=changes),
        # Destructive: the user confirms the exact task; the ledger keeps a second confirmation a replay.
        Tool(
            "delete_task",
            "Delete a task. Needs the user's confirmation.",
            TaskNumberParams,
            tasks.delete_task,
            side_effect=True,
            needs_approval=True,
            records=changes,
        ),
    ]


class _TaskList:
    """The task tools' handlers: they read the user's list from the store and return the rows to
    write as side effects."""

    def __init__(self, store: TaskReader) -> None:
        self.store = store

    async def add_task(self, p: AddTaskParams, ctx: ToolContext) -> ToolOutput:
        owner = ctx.owner
        number = await self.store.next_task_number(owner)
        # Keyed by the interaction: a retried turn writes the task once, a new request adds another.
        task_id = "K-" + hashlib.sha256(f"{owner}|{ctx.interaction_id}|{p.title}".encode()).hexdigest()[:12]
        now = ctx.now.isoformat()
        row = {"id": task_id, "owner": owner, "number": number, "title": p.title, "status": "open"}
        effect = SideEffect(kind="task", key=task_id, data={**row, "created_at": now, "updated_at": now})
        return ToolOutput(data={"number": number, "title": p.title, "status": "added"}, effects=[effect])

    async def list_tasks(self, p: ListTasksParams, ctx: ToolContext) -> ToolOutput:
        items = [t for t in await self.store.list_tasks(ctx.owner) if p.show == "all" or t.status == p.show]
        lines = [f"{t.number}. {t.title}" + (" (done)" if t.status == "done" else "") for t in items]
        return ToolOutput(
            data={
                "status": "listed" if items else "empty",
                "count": len(items),
                "open": sum(1 for t in items if t.status == "open"),
                "listing": "\n".join(lines),
                "items": [t.model_dump(include={"number", "title", "status"}) for t in items],
            }
        )

    async def update_task(self, p: UpdateTaskParams, ctx: ToolContext) -> ToolOutput:
        task = await self._find(ctx, p.number, "update_task")
        return ToolOutput(
            data={"number": task.number, "title": p.title, "old_title": task.title, "status": "updated"},
            effects=[_change(task, title=p.title)],
        )

    async def complete_task(self, p: TaskNumberParams, ctx: ToolContext) -> ToolOutput:
        task = await self._find(ctx, p.number, "complete_task")
        outcome = "already_done" if task.status == "done" else "completed"
        return ToolOutput(
            data={"number": task.number, "title": task.title, "status": outcome}, effects=[_change(task, status="done")]
        )

    async def delete_task(self, p: TaskNumberParams, ctx: ToolContext) -> ToolOutput:
        task = await self._find(ctx, p.number, "delete_task")
        return ToolOutput(
            data={"number": task.number, "title": task.title, "status": "deleted"},
            effects=[_change(task, status="deleted")],
        )

    async def _find(self, ctx: ToolContext, number: int, tool: str) -> TaskRecord:
        for task in await self.store.list_tasks(ctx.owner):
            if task.number == number:
                return task
        raise ToolError(tool, f"no task {number}", code="not_found")


def _change(task: TaskRecord, **values: str) -> SideEffect:
    return SideEffect(kind="task_change", key=task.id, data={"id": task.id, "owner": task.owner, **values})
