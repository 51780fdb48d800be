#!/usr/bin/env python3
"""A small ClearML-like queue service on the Python bindings, keeping its jobs in SQLite.

    pip install ./python
    python python/examples/python_queue_service.py [DATABASE]   (default: a temporary file)

Users enqueue training tasks; the service keeps every task and the scheduler's snapshot in
SQLite (standard library sqlite3), ticks gangway, marks the tasks it starts, and prints the
queue with gangway's reason for each waiting task. Halfway through, the service "restarts":
a new service object opens the same database, restores the scheduler from the stored
snapshot, and carries on with the same decisions. Exits 1 if the restarted service disagrees
with one that never stopped.
"""

import json
import os
import sqlite3
import sys
import tempfile
from typing import Any, Dict, List, Optional, Tuple

import gangway

CLUSTER = {
    "nodes": [{"name": f"gpu{i}", "cpus": 64, "memory_mib": 512_000,
               "gpus": {"model": "a100", "count": 8}} for i in (1, 2)],
    "accounts": [{"name": "vision", "shares": 1}, {"name": "nlp", "shares": 1}],
    "policy": {"priority": {"weights": {"fairshare": 1000, "age": 10}}},
}

SCHEMA = """
create table if not exists tasks (
    id text primary key, account text not null, gpus integer not null,
    workers integer not null, minutes integer not null, state text not null,
    node_list text, enqueued_ms integer not null);
create table if not exists scheduler (k text primary key, snapshot text not null, now_ms integer);
"""


class QueueService:
    """Tasks in SQLite, decisions from gangway; a restart restores from the last snapshot."""

    def __init__(self, path: str) -> None:
        self.db = sqlite3.connect(path)
        self.db.executescript(SCHEMA)
        row = self.db.execute("select snapshot, now_ms from scheduler where k = 'main'").fetchone()
        if row:
            self.scheduler = gangway.Scheduler.restore(json.loads(row[0]))
            self.now_ms = row[1]
        else:
            self.scheduler = gangway.Scheduler(CLUSTER)
            self.now_ms = 0
        self.outbox: List[Dict[str, Any]] = []

    def enqueue(self, task_id: str, account: str, gpus: int, workers: int = 1,
                minutes: int = 60) -> None:
        self.db.execute("insert into tasks values (?, ?, ?, ?, ?, 'queued', null, ?)",
                        (task_id, account, gpus, workers, minutes, self.now_ms))
        self.outbox.append({"type": "submit", "job": {
            "id": task_id, "account": account, "time_limit_ms": minutes * 60_000,
            "groups": [{"count": workers, "gpus": gpus, "cpus": 4 * gpus}]}})

    def complete(self, task_id: str) -> None:
        self.db.execute("update tasks set state = 'completed' where id = ?", (task_id,))
        self.outbox.append({"type": "finished", "job": task_id, "outcome": "completed"})

    def advance(self, minutes: int) -> Dict[str, Any]:
        """Ticks at the new time with what happened since; stores the outcome and snapshot."""
        self.now_ms += minutes * 60_000
        out = self.scheduler.tick(self.now_ms, self.outbox)
        self.outbox = []
        for rejected in out["rejected"]:
            print("  rejected:", rejected["error"]["message"])
        for decision in out["decisions"]:
            if decision["type"] == "start":
                nodes = ",".join(p["node"] for p in decision["placement"])
                self.db.execute("update tasks set state = 'running', node_list = ? where id = ?",
                                (nodes, decision["job"]))
            elif decision["type"] in ("kill", "cancel"):
                # Past its time limit (kill) or cancelled: the agent stops it, and gangway has
                # already freed its resources.
                self.db.execute("update tasks set state = ? where id = ?",
                                (decision["type"] + "ed", decision["job"]))
        self.db.execute("insert or replace into scheduler values ('main', ?, ?)",
                        (json.dumps(self.scheduler.snapshot()), self.now_ms))
        self.db.commit()
        return out

    def queue(self) -> List[Tuple[str, str, Optional[str]]]:
        """(task, state, where or why) rows: running tasks with nodes, queued ones with reasons."""
        reasons = {p["job"]: p for p in self.scheduler.explain()["pending"]}
        rows: List[Tuple[str, str, Optional[str]]] = []
        for task_id, state, nodes in self.db.execute(
                "select id, state, node_list from tasks where state in ('queued', 'running') order by id"):
            if state == "running":
                rows.append((task_id, state, nodes))
            else:
                pending = reasons[task_id]
                why = pending["reason"]
                if pending.get("estimated_start_ms") is not None:
                    why += f" (start ~{pending['estimated_start_ms'] // 60_000} min)"
                rows.append((task_id, f"queued #{pending['position']}", why))
        return rows

    def print_queue(self) -> None:
        print(f"t = {self.now_ms // 60_000} min")
        for task_id, state, detail in self.queue():
            print(f"  {task_id:12} {state:10} {detail}")


def first_half(service: QueueService) -> None:
    service.enqueue("resnet", "vision", gpus=8, minutes=120)
    service.enqueue("bert-large", "nlp", gpus=8, workers=2, minutes=90)
    service.enqueue("vit-sweep-1", "vision", gpus=2, minutes=30)
    service.advance(1)
    service.enqueue("gpt-small", "nlp", gpus=4, minutes=45)
    service.advance(5)


def second_half(service: QueueService) -> None:
    service.complete("resnet")
    service.advance(120)
    service.enqueue("vit-sweep-2", "vision", gpus=2, minutes=30)
    service.advance(1)


def main() -> int:
    path = sys.argv[1] if len(sys.argv) > 1 else None
    with tempfile.TemporaryDirectory() as tmp:
        path = path or os.path.join(tmp, "queue.db")
        service = QueueService(path)
        first_half(service)
        service.print_queue()
        service.db.close()

        print("-- restart: a new service restores the scheduler from SQLite")
        restarted = QueueService(path)
        second_half(restarted)
        restarted.print_queue()

        # The same history without a restart gives the same queue.
        unbroken = QueueService(os.path.join(tmp, "unbroken.db"))
        first_half(unbroken)
        second_half(unbroken)
        if unbroken.queue() != restarted.queue():
            print("the restarted service disagrees with the unbroken one", file=sys.stderr)
            return 1
        print("restart kept every decision")
    return 0


if __name__ == "__main__":
    sys.exit(main())
