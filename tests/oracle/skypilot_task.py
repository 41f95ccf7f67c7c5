#!/usr/bin/env python3
"""Reads a task file with SkyPilot's own parser (sky.Task.from_yaml) and
prints what it means as JSON: name, nodes, envs, secret names, workdir,
file-mount targets, and
every resource alternative as (accelerator, count, cloud, region,
use_spot). The test beside it compares this with what Causeway reads from
the same file. Run offline: parsing a task needs no cloud credentials."""
import json
import sys

import sky  # pinned by scripts/install-deps.sh test


def main(path):
    task = sky.Task.from_yaml(path)
    resources = task.resources
    if not isinstance(resources, (list, set, tuple)):
        resources = [resources]
    alternatives = []
    for r in resources:
        for name, count in (r.accelerators or {}).items():
            alternatives.append({
                "type": name.upper(),
                "count": int(count),
                "cloud": str(r.cloud).lower() if r.cloud else "",
                "region": r.region or "",
                "use_spot": bool(r.use_spot),
            })
    print(json.dumps({
        "name": task.name or "",
        "num_nodes": task.num_nodes,
        "envs": {k: str(v) for k, v in (task.envs or {}).items()},
        "secrets": sorted((getattr(task, "secrets", None) or {}).keys()),
        "workdir": task.workdir if isinstance(task.workdir, str) else dict(task.workdir or {}),
        # Bucket mounts ({name:, mode:}) are kept apart as storage mounts.
        "file_mounts": sorted(set((task.file_mounts or {}).keys()) | set((task.storage_mounts or {}).keys())),
        "alternatives": sorted(alternatives, key=lambda a: json.dumps(a, sort_keys=True)),
        "ordered": isinstance(task.resources, list) and len(task.resources) > 1,
    }))


if __name__ == "__main__":
    main(sys.argv[1])
