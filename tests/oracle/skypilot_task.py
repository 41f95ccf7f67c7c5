#!/usr/bin/env python3
"""Reads a task file with SkyPilot's own parser (sky.Task.from_yaml) and
prints what it means as JSON: name, nodes, envs, secret names, workdir,
file-mount targets and sources (storage objects' names), and
every resource alternative as (accelerator, count, cloud, region,
use_spot). With --dag, reads it as a pipeline (SkyPilot's chain DAG loader)
and prints the pipeline's name and each task in order; with --group, as a
job group, each task also with whether it is auxiliary and its termination
delay in seconds. With --service FILE..., reads each task's `service:`
section with SkyPilot Serve's own SkyServiceSpec and prints a line for
each: {"file", "ok", "service": its fields} or {"file", "ok": false,
"error"} (one process for many files: importing SkyPilot takes seconds).
The test beside it
compares this with what Causeway reads from the same file (the last line
of the output: SkyPilot's loaders may log before it). Run offline:
parsing a task needs no cloud credentials."""
import json
import sys

import sky  # pinned by scripts/install-deps.sh test


def describe(task):
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
    return {
        "name": task.name or "",
        "num_nodes": task.num_nodes,
        "envs": {k: str(v) for k, v in (task.envs or {}).items()},
        "secrets": sorted((getattr(task, "secrets", None) or {}).keys()),
        "workdir": task.workdir if isinstance(task.workdir, str) else dict(task.workdir or {}),
        # Bucket mounts ({name:, mode:}) are kept apart as storage mounts.
        "file_mounts": sorted(set((task.file_mounts or {}).keys()) | set((task.storage_mounts or {}).keys())),
        # Where each plain mount comes from, and each storage object's
        # bucket name and source, with the task's variables filled in.
        "mount_sources": {k: str(v) for k, v in (task.file_mounts or {}).items()},
        "storage": {k: {"name": s.name or "", "source": s.source if isinstance(s.source, str) else ""}
                    for k, s in (task.storage_mounts or {}).items()},
        "alternatives": sorted(alternatives, key=lambda a: json.dumps(a, sort_keys=True)),
        "ordered": isinstance(task.resources, list) and len(task.resources) > 1,
    }


def describe_service(path):
    from sky.serve import service_spec
    from sky.utils import yaml_utils
    with open(path, encoding="utf-8") as f:
        config = yaml_utils.safe_load(f.read())
    s = service_spec.SkyServiceSpec.from_yaml_config(config["service"])
    probe = {
        "path": s.readiness_path,
        "initial_delay_seconds": float(s.initial_delay_seconds),
        "timeout_seconds": float(s.readiness_timeout_seconds),
        "interval_seconds": float(s.endpoint_probe_interval_seconds),
        "headers": s.readiness_headers or {},
    }
    if s.consecutive_failure_threshold_timeout is not None:
        probe["failure_timeout_seconds"] = float(s.consecutive_failure_threshold_timeout)
    if s.post_data is not None:
        probe["post_data"] = s.post_data
    policy = {"min_replicas": s.min_replicas}
    for key in ("max_replicas", "num_overprovision", "base_ondemand_fallback_replicas"):
        if getattr(s, key) is not None:
            policy[key] = getattr(s, key)
    for key in ("upscale_delay_seconds", "downscale_delay_seconds"):
        if getattr(s, key) is not None:
            policy[key] = float(getattr(s, key))
    qps = s.target_qps_per_replica
    if qps is not None:
        policy["target_qps_per_replica"] = ({k: float(v) for k, v in qps.items()}
                                            if isinstance(qps, dict) else float(qps))
    if s.dynamic_ondemand_fallback is not None:
        policy["dynamic_ondemand_fallback"] = s.dynamic_ondemand_fallback
    if s.spot_placer is not None:
        policy["spot_placer"] = s.spot_placer.lower()
    out = {
        "readiness_probe": probe,
        "replica_policy": policy,
        "load_balancing_policy": s.load_balancing_policy,
        "stream_timeout_seconds": float(s.lb_stream_timeout_seconds),
    }
    if s.ports is not None:
        out["ports"] = int(s.ports)
    if s.tls_credential is not None:
        out["tls"] = {"keyfile": s.tls_credential.keyfile, "certfile": s.tls_credential.certfile}
    return out


def main(args):
    if args[0] == "--service":
        for path in args[1:]:
            try:
                print(json.dumps({"file": path, "ok": True, "service": describe_service(path)}))
            except Exception as e:  # pylint: disable=broad-except
                print(json.dumps({"file": path, "ok": False, "error": str(e)}))
    elif args[0] == "--dag":
        from sky.utils import dag_utils
        dag = dag_utils.load_chain_dag_from_yaml(args[1])
        print(json.dumps({"name": dag.name or "", "tasks": [describe(t) for t in dag.tasks]}))
    elif args[0] == "--group":
        from sky.utils import dag_utils
        dag = dag_utils.load_job_group_from_yaml(args[1])
        tasks = []
        for t in dag.tasks:
            d = describe(t)
            d["auxiliary"] = not dag.is_primary_task(t.name)
            d["termination_delay_seconds"] = (
                dag.get_termination_delay_secs(t.name) if d["auxiliary"] else 0)
            tasks.append(d)
        print(json.dumps({"name": dag.name or "", "job_group": dag.is_job_group(), "tasks": tasks}))
    else:
        print(json.dumps(describe(sky.Task.from_yaml(args[0]))))


if __name__ == "__main__":
    main(sys.argv[1:])
