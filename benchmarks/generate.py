"""Deterministic generator of realistic Kubernetes manifest repositories for the dra-migrate benchmarks.

    python benchmarks/generate.py OUT_DIR --files 10000 --gpu-fraction 0.05 --seed 1 [--index INDEX.json]

Same arguments → byte-identical output. Every file's content comes from an RNG seeded by (seed, path), and
the repository plan (directories, file roles, which files carry GPUs) from an RNG seeded by the seed alone, so
nothing depends on hash randomisation or the clock.

Files without GPUs never contain `nvidia.com`, except a controlled fraction (`--fp-fraction`, default 0.5 %)
that mention it in a comment or an unrelated annotation: these are the prefilter's false positives.
The optional index (JSON, `--index`) lists every file with its role and flags; keep it outside OUT_DIR so the
benchmarked tree holds only manifests.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.yamlemit import Style, dump_docs

GEN_VERSION = 1  # bump when output changes, so cached benchmark repos get regenerated

Doc = dict[str, Any]

# ------------------------------------------------------------------------------------------------------------
# Vocabularies. None of these may contain "nvidia.com" except the GPU_* ones and FP_* ones.
# ------------------------------------------------------------------------------------------------------------
TEAMS = [
    "payments",
    "search",
    "platform",
    "data",
    "ml",
    "infra",
    "growth",
    "identity",
    "media",
    "ads",
    "risk",
    "catalog",
    "checkout",
    "messaging",
    "observability",
    "research",
]
APP_WORDS = [
    "api",
    "web",
    "worker",
    "gateway",
    "indexer",
    "scheduler",
    "cache",
    "ingest",
    "router",
    "frontend",
    "backend",
    "exporter",
    "collector",
    "notifier",
    "billing",
    "auth",
    "profile",
    "feed",
    "ranker",
    "trainer",
    "serving",
    "embedder",
    "etl",
    "reporter",
    "sync",
    "proxy",
    "batch",
    "stream",
]
IMAGES = [
    "nginx:1.27.2",
    "redis:7.4-alpine",
    "postgres:16.4",
    "python:3.12-slim",
    "golang:1.23",
    "busybox:1.36",
    "ghcr.io/example/app:v2.3.1",
    "quay.io/prometheus/node-exporter:v1.8.2",
    "envoyproxy/envoy:v1.31.2",
    "registry.k8s.io/pause:3.10",
    "bitnami/kafka:3.8",
    "grafana/grafana:11.2.0",
    "otel/opentelemetry-collector:0.110.0",
    "europe-docker.pkg.dev/acme/apps/service:1.4.0",
    "123456789012.dkr.ecr.us-east-1.amazonaws.com/app:2024.10.1",
]
GPU_IMAGES = [
    "nvcr.io/nvidia/pytorch:24.09-py3",
    "nvcr.io/nvidia/tritonserver:24.09-py3",
    "vllm/vllm-openai:v0.6.3",
    "nvcr.io/nvidia/cuda:12.6.2-base-ubuntu22.04",
    "rayproject/ray-ml:2.37.0-gpu",
    "ghcr.io/huggingface/text-generation-inference:2.3.1",
    "nvcr.io/nvidia/nemo:24.07",
]
COMMENTS = [
    "TODO: move to the shared chart",
    "keep in sync with the staging overlay",
    "owned by the platform team",
    "bumped after the October incident",
    "see runbook RB-114",
    "do not change without a load test",
    "values tuned for peak traffic",
    "required by the security baseline",
    "FIXME remove after migration",
    "managed by Argo CD",
    "default from upstream",
    "cost: reviewed quarterly",
    "matches the HPA target",
    "increase if p99 latency regresses",
    "needed for the readiness probe",
    "legacy name kept for DNS",
]
GPU_COMMENTS = [
    "one full GPU per replica",
    "nvidia.com/gpu is an extended resource: requests must equal limits",
    "scheduled on the A100 pool",
    "MIG slice is enough for this model",
    "GFD label picks the SKU",
    "the device plugin advertises nvidia.com/gpu",
    "keep GPU count in sync with tensor parallelism",
]
LICENSE = [
    "Copyright 2024 Example Corp.",
    "",
    'Licensed under the Apache License, Version 2.0 (the "License");',
    "you may not use this file except in compliance with the License.",
    "You may obtain a copy of the License at",
    "",
    "    http://www.apache.org/licenses/LICENSE-2.0",
]
GPU_PRODUCTS = [
    "NVIDIA-A100-SXM4-80GB",
    "NVIDIA-A100-SXM4-40GB",
    "NVIDIA-H100-80GB-HBM3",
    "Tesla-T4",
    "NVIDIA-L4",
    "NVIDIA-A10G",
    "NVIDIA-H200",
    "Tesla-V100-SXM2-16GB",
]
GKE_ACCEL = [
    "nvidia-l4",
    "nvidia-tesla-a100",
    "nvidia-a100-80gb",
    "nvidia-h100-80gb",
    "nvidia-tesla-t4",
    "nvidia-h100-mega-80gb",
]
MIG = [
    "nvidia.com/mig-1g.10gb",
    "nvidia.com/mig-2g.20gb",
    "nvidia.com/mig-3g.40gb",
    "nvidia.com/mig-1g.5gb",
    "nvidia.com/mig-7g.80gb",
    "nvidia.com/mig-4g.40gb",
]
FP_COMMENTS = [
    "driver docs: https://docs.nvidia.com/datacenter/tesla/ (this service needs no GPU)",
    "unlike the trainer, this job does not request nvidia.com resources",
    "artifacts mirrored from catalog.ngc.nvidia.com",
]
FP_ANNOTATIONS = [
    ("support.nvidia.com/contract", "NV-2024-0173"),
    ("docs.example.io/see-also", "https://docs.nvidia.com/"),
    ("vendor.nvidia.com/license-tier", "enterprise"),
]


@dataclass
class FileEntry:
    path: str
    role: str
    gpu: bool = False
    fp: bool = False
    template: bool = False  # Helm template text: not valid YAML before rendering
    fmt: str = "yaml"  # yaml | json | tpl
    crlf: bool = False


@dataclass
class Ctx:
    rng: random.Random
    name: str
    team: str
    gpu: bool
    fp: bool
    st: Style
    chart: str = ""


def _name(rng: random.Random) -> str:
    return f"{rng.choice(APP_WORDS)}-{rng.choice(APP_WORDS)}" if rng.random() < 0.4 else rng.choice(APP_WORDS)


def _style(rng: random.Random, gpu: bool) -> Style:
    ind = rng.choice([2, 2, 2, 4])
    return Style(
        indent=ind,
        indent_seq=rng.random() < 0.55,
        flow_prob=rng.choice([0.0, 0.0, 0.1, 0.35]),
        comment_prob=rng.choice([0.0, 0.03, 0.08, 0.15]),
        quote_slash_keys=rng.random() < 0.15,
        single_quotes=rng.random() < 0.3,
        trailing_comment_prob=rng.choice([0.0, 0.02, 0.05]),
        comments=tuple(COMMENTS + (GPU_COMMENTS if gpu else [])),
    )


def _labels(c: Ctx) -> dict[str, str]:
    lab = {"app.kubernetes.io/name": c.name, "app.kubernetes.io/part-of": c.team}
    if c.rng.random() < 0.5:
        lab["app.kubernetes.io/managed-by"] = c.rng.choice(["kustomize", "argocd", "Helm", "flux"])
    if c.rng.random() < 0.3:
        lab["tier"] = c.rng.choice(["frontend", "backend", "batch", "infra"])
    return lab


def _meta(c: Ctx, kind_suffix: str = "") -> Doc:
    m: Doc = {"name": c.name + kind_suffix}
    if c.rng.random() < 0.6:
        m["namespace"] = c.team
    m["labels"] = _labels(c)
    if c.rng.random() < 0.35:
        m["annotations"] = {
            "argocd.argoproj.io/sync-wave": str(c.rng.randint(-2, 5)),
            "example.io/owner": f"{c.team}@example.io",
        }
    return m


# ------------------------------------------------------------------------------------------------------------
# Pod templates
# ------------------------------------------------------------------------------------------------------------
def _env(c: Ctx, n: int) -> list[Doc]:
    out: list[Doc] = []
    for i in range(n):
        r = c.rng.random()
        prefix = c.rng.choice(["LOG", "APP", "DB", "CACHE", "FEATURE", "OTEL"])
        k = f"{prefix}_{c.rng.choice(['LEVEL', 'URL', 'PORT', 'MODE', 'TIMEOUT', 'NAME'])}_{i}"
        if r < 0.6:
            out.append(
                {
                    "name": k,
                    "value": c.rng.choice(["info", "8080", "true", "http://svc.local:9000", "5s", "json"]),
                }
            )
        elif r < 0.8:
            out.append(
                {"name": k, "valueFrom": {"secretKeyRef": {"name": f"{c.name}-secret", "key": k.lower()}}}
            )
        else:
            out.append({"name": k, "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}})
    return out


def _cpu_resources(c: Ctx) -> Doc:
    cpu = c.rng.choice(["100m", "250m", "500m", "1", "2", "4"])
    mem = c.rng.choice(["128Mi", "256Mi", "512Mi", "1Gi", "2Gi", "8Gi"])
    res: Doc = {"requests": {"cpu": cpu, "memory": mem}}
    if c.rng.random() < 0.7:
        res["limits"] = {"memory": mem} if c.rng.random() < 0.5 else {"cpu": cpu, "memory": mem}
    return res


def _gpu_resources(c: Ctx) -> Doc:
    rng = c.rng
    mem = rng.choice(["16Gi", "32Gi", "64Gi", "128Gi"])
    if rng.random() < 0.2:
        gkey, n = rng.choice(MIG), rng.choice([1, 1, 2])
    else:
        gkey, n = "nvidia.com/gpu", rng.choice([1, 1, 1, 2, 4, 8])
    val: Any = str(n) if rng.random() < 0.25 else n
    res: Doc = {"limits": {"cpu": str(rng.choice([4, 8, 16])), "memory": mem, gkey: val}}
    if rng.random() < 0.4:
        res["requests"] = {"cpu": str(rng.choice([2, 4, 8])), "memory": mem, gkey: val}
    elif rng.random() < 0.5:
        res["requests"] = {"cpu": "2", "memory": mem}
    return res


def _container(c: Ctx, name: str, gpu: bool, main: bool = True) -> Doc:
    rng = c.rng
    ct: Doc = {"name": name, "image": rng.choice(GPU_IMAGES if gpu else IMAGES)}
    if rng.random() < 0.4:
        ct["imagePullPolicy"] = rng.choice(["IfNotPresent", "Always"])
    if rng.random() < 0.4:
        ct["command"] = rng.choice([["/bin/sh", "-c"], ["python", "-m", "app"], ["/usr/local/bin/server"]])
        ct["args"] = rng.choice(
            [
                ["--port=8080", "--log-level=info"],
                ["serve", "--config", "/etc/app/config.yaml"],
                ["exec /app/start.sh 2>&1 | tee /var/log/app.log"],
            ]
        )
    if main:
        ct["ports"] = [
            {"name": "http", "containerPort": rng.choice([80, 8080, 8000, 9090]), "protocol": "TCP"}
        ]
        if rng.random() < 0.3:
            ct["ports"].append({"name": "metrics", "containerPort": 9102})
    ct["env"] = _env(c, rng.randint(0, 6))
    if gpu and rng.random() < 0.3:
        ct["env"].append({"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "compute,utility"})
    ct["resources"] = _gpu_resources(c) if gpu else _cpu_resources(c)
    if main and rng.random() < 0.6:
        probe = {"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 10}
        ct["readinessProbe"] = probe
        ct["livenessProbe"] = dict(probe, initialDelaySeconds=rng.choice([5, 15, 30]))
    if rng.random() < 0.5:
        ct["volumeMounts"] = [{"name": "config", "mountPath": "/etc/app", "readOnly": True}]
        if gpu:
            ct["volumeMounts"].append({"name": "dshm", "mountPath": "/dev/shm"})
    if rng.random() < 0.3:
        ct["securityContext"] = {
            "runAsNonRoot": True,
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
        }
    return ct


def _pod_spec(c: Ctx) -> Doc:
    rng = c.rng
    spec: Doc = {}
    if rng.random() < 0.5:
        spec["serviceAccountName"] = c.name
    if rng.random() < 0.3:
        spec["initContainers"] = [_container(c, "init-config", False, main=False)]
    containers = [_container(c, c.name.split("-")[0], c.gpu)]
    if rng.random() < 0.35:  # sidecars; in GPU pods sometimes a second GPU container
        second_gpu = c.gpu and rng.random() < 0.3
        containers.append(
            _container(
                c, rng.choice(["envoy", "log-shipper", "metrics", "model-loader"]), second_gpu, main=False
            )
        )
    spec["containers"] = containers
    if c.gpu:
        r = rng.random()
        if r < 0.35:
            spec["nodeSelector"] = {"nvidia.com/gpu.product": rng.choice(GPU_PRODUCTS)}
        elif r < 0.5:
            spec["nodeSelector"] = {"nvidia.com/gpu.memory": rng.choice(["81920", "40960", "24576", "16384"])}
        elif r < 0.7:
            spec["nodeSelector"] = {"cloud.google.com/gke-accelerator": rng.choice(GKE_ACCEL)}
            if rng.random() < 0.4:
                spec["nodeSelector"]["cloud.google.com/gke-accelerator-count"] = rng.choice(["1", "2", "8"])
        elif r < 0.82:
            spec["affinity"] = {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {
                                        "key": "nvidia.com/gpu.product",
                                        "operator": "In",
                                        "values": rng.sample(GPU_PRODUCTS, rng.randint(1, 3)),
                                    }
                                ]
                            }
                        ]
                    }
                }
            }
        if rng.random() < 0.7:
            spec["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
        if rng.random() < 0.15:
            spec["runtimeClassName"] = "nvidia"
    elif rng.random() < 0.3:
        spec["nodeSelector"] = {"kubernetes.io/os": "linux"}
        if rng.random() < 0.3:
            spec["tolerations"] = [
                {"key": "dedicated", "operator": "Equal", "value": c.team, "effect": "NoSchedule"}
            ]
    vols: list[Doc] = [{"name": "config", "configMap": {"name": f"{c.name}-config"}}]
    if c.gpu:
        vols.append({"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}})
    spec["volumes"] = vols
    return spec


def _template(c: Ctx) -> Doc:
    return {"metadata": {"labels": {"app.kubernetes.io/name": c.name}}, "spec": _pod_spec(c)}


# ------------------------------------------------------------------------------------------------------------
# Objects
# ------------------------------------------------------------------------------------------------------------
def deployment(c: Ctx) -> Doc:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _meta(c),
        "spec": {
            "replicas": c.rng.choice([1, 2, 3, 5]),
            "revisionHistoryLimit": 5,
            "selector": {"matchLabels": {"app.kubernetes.io/name": c.name}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}},
            "template": _template(c),
        },
    }


def statefulset(c: Ctx) -> Doc:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": _meta(c),
        "spec": {
            "serviceName": c.name,
            "replicas": c.rng.choice([1, 3]),
            "selector": {"matchLabels": {"app.kubernetes.io/name": c.name}},
            "template": _template(c),
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "storageClassName": "standard-rwo",
                        "resources": {"requests": {"storage": c.rng.choice(["10Gi", "100Gi", "500Gi"])}},
                    },
                }
            ],
        },
    }


def job(c: Ctx) -> Doc:
    tpl = _template(c)
    tpl["spec"]["restartPolicy"] = "Never"
    spec: Doc = {"backoffLimit": c.rng.choice([0, 2, 6]), "template": tpl}
    if c.rng.random() < 0.3:
        spec.update(completions=4, parallelism=c.rng.choice([2, 4]), completionMode="Indexed")
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": _meta(c), "spec": spec}


def cronjob(c: Ctx) -> Doc:
    j = job(c)
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": _meta(c),
        "spec": {
            "schedule": c.rng.choice(["0 3 * * *", "*/15 * * * *", "30 1 * * 0"]),
            "concurrencyPolicy": "Forbid",
            "successfulJobsHistoryLimit": 3,
            "jobTemplate": {"spec": j["spec"]},
        },
    }


def daemonset(c: Ctx) -> Doc:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": _meta(c),
        "spec": {"selector": {"matchLabels": {"app.kubernetes.io/name": c.name}}, "template": _template(c)},
    }


def raycluster(c: Ctx) -> Doc:
    head = Ctx(c.rng, c.name, c.team, False, c.fp, c.st)
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": _meta(c),
        "spec": {
            "rayVersion": "2.37.0",
            "headGroupSpec": {"rayStartParams": {"dashboard-host": "0.0.0.0"}, "template": _template(head)},
            "workerGroupSpecs": [
                {
                    "groupName": "workers",
                    "replicas": c.rng.choice([1, 2, 4]),
                    "minReplicas": 0,
                    "maxReplicas": 8,
                    "rayStartParams": {},
                    "template": _template(c),
                }
            ],
        },
    }


def pytorchjob(c: Ctx) -> Doc:
    def rs(n: int) -> Doc:
        tpl = _template(c)
        tpl["spec"]["containers"][0]["name"] = "pytorch"
        return {"replicas": n, "restartPolicy": "OnFailure", "template": tpl}

    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": _meta(c),
        "spec": {"pytorchReplicaSpecs": {"Master": rs(1), "Worker": rs(c.rng.choice([1, 3, 7]))}},
    }


def jobset(c: Ctx) -> Doc:
    j = job(c)
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": _meta(c),
        "spec": {
            "failurePolicy": {"maxRestarts": 3},
            "replicatedJobs": [
                {"name": "workers", "replicas": c.rng.choice([1, 2, 4]), "template": {"spec": j["spec"]}}
            ],
        },
    }


def service(c: Ctx) -> Doc:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _meta(c),
        "spec": {
            "type": c.rng.choice(["ClusterIP", "ClusterIP", "LoadBalancer", "NodePort"]),
            "selector": {"app.kubernetes.io/name": c.name},
            "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}],
        },
    }


def ingress(c: Ctx) -> Doc:
    host = f"{c.name}.{c.team}.example.io"
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": _meta(c),
        "spec": {
            "ingressClassName": "nginx",
            "tls": [{"hosts": [host], "secretName": f"{c.name}-tls"}],
            "rules": [
                {
                    "host": host,
                    "http": {
                        "paths": [
                            {
                                "path": "/",
                                "pathType": "Prefix",
                                "backend": {"service": {"name": c.name, "port": {"name": "http"}}},
                            }
                        ]
                    },
                }
            ],
        },
    }


def secret(c: Ctx) -> Doc:
    data = {
        k: base64.b64encode(c.rng.randbytes(c.rng.randint(12, 200))).decode()
        for k in c.rng.sample(["password", "token", "api-key", "tls.key", "dsn", "client-secret"], 3)
    }
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": _meta(c, "-secret"),
        "type": "Opaque",
        "data": data,
    }


def _config_text(rng: random.Random, target: int) -> str:
    """Multi-line config payloads (properties, nginx, JSON dashboards) up to roughly `target` bytes."""
    kind = rng.choice(["props", "nginx", "json", "rules"])
    lines: list[str] = []
    size = 0
    i = 0
    while size < target:
        if kind == "props":
            line = f"{rng.choice(APP_WORDS)}.{rng.choice(APP_WORDS)}.setting{i}={rng.randint(0, 10**6)}"
        elif kind == "nginx":
            line = (
                f"location /{rng.choice(APP_WORDS)}/{i} {{ proxy_pass http://{rng.choice(APP_WORDS)}:8080; }}"
            )
        elif kind == "json":
            line = json.dumps(
                {
                    "id": i,
                    "title": f"{rng.choice(APP_WORDS)} panel",
                    "type": "timeseries",
                    "targets": [{"expr": f'rate(http_requests_total{{job="{rng.choice(APP_WORDS)}"}}[5m])'}],
                }
            )
        else:
            alert = f"High{rng.choice(APP_WORDS).title()}Latency{i}"
            line = f"- alert: {alert}\n  expr: histogram_quantile(0.99, x) > {rng.randint(1, 9)}"
        lines.append(line)
        size += len(line) + 1
        i += 1
    return "\n".join(lines) + "\n"


def configmap(c: Ctx, large: bool = False) -> Doc:
    rng = c.rng
    data: Doc = {}
    if large:
        total = rng.randint(50_000, 180_000)  # payload; YAML indentation adds a few per cent
        parts = rng.randint(1, 3)
        for p in range(parts):
            data[f"{rng.choice(['dashboard', 'rules', 'nginx', 'app'])}-{p}.conf"] = _config_text(
                rng, total // parts
            )
    else:
        data["LOG_LEVEL"] = rng.choice(["info", "debug", "warn"])
        data["config.yaml"] = _config_text(rng, rng.randint(100, 900))
        if rng.random() < 0.5:
            data["FEATURE_FLAGS"] = "a,b,c"
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(c, "-config"), "data": data}


def rbac(c: Ctx) -> list[Doc]:
    rules = [
        {"apiGroups": [""], "resources": ["configmaps", "secrets"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "patch"]},
    ]
    sa = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(c)}
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": _meta(c),
        "rules": rules,
    }
    rb = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": _meta(c),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": c.name},
        "subjects": [{"kind": "ServiceAccount", "name": c.name, "namespace": c.team}],
    }
    return [sa, role, rb]


def hpa(c: Ctx) -> Doc:
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": _meta(c),
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": c.name},
            "minReplicas": 2,
            "maxReplicas": c.rng.choice([5, 10, 20]),
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}},
                }
            ],
        },
    }


def crd(c: Ctx) -> Doc:
    props = {
        f"field{i}": {
            "type": c.rng.choice(["string", "integer", "boolean"]),
            "description": f"The {c.rng.choice(APP_WORDS)} setting number {i}",
        }
        for i in range(c.rng.randint(5, 30))
    }
    plural = f"{c.name.replace('-', '')}s"
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{c.team}.example.io"},
        "spec": {
            "group": f"{c.team}.example.io",
            "scope": "Namespaced",
            "names": {"kind": c.name.title().replace("-", ""), "plural": plural},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {"spec": {"type": "object", "properties": props}},
                        }
                    },
                }
            ],
        },
    }


WORKLOADS: dict[str, Callable[[Ctx], Doc]] = {
    "deployment": deployment,
    "statefulset": statefulset,
    "job": job,
    "cronjob": cronjob,
    "daemonset": daemonset,
    "raycluster": raycluster,
    "pytorchjob": pytorchjob,
    "jobset": jobset,
}


# ------------------------------------------------------------------------------------------------------------
# Helm and kustomize
# ------------------------------------------------------------------------------------------------------------
HELM_HELPERS = """{{/* Expand the name of the chart. */}}
{{- define "CHART.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "CHART.fullname" -}}
{{- printf "%s-%s" .Release.Name (include "CHART.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "CHART.labels" -}}
app.kubernetes.io/name: {{ include "CHART.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}
"""

HELM_DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "CHART.fullname" . }}
  labels:
    {{- include "CHART.labels" . | nindent 4 }}
spec:
  {{- if not .Values.autoscaling.enabled }}
  replicas: {{ .Values.replicaCount }}
  {{- end }}
  selector:
    matchLabels:
      app.kubernetes.io/name: {{ include "CHART.name" . }}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: {{ include "CHART.name" . }}
    spec:
      # COMMENT
      containers:
        - name: {{ .Chart.Name }}
          image: "{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}"
          imagePullPolicy: {{ .Values.image.pullPolicy }}
          ports:
            - name: http
              containerPort: {{ .Values.service.port }}
          resources:
RESOURCES
      {{- with .Values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with .Values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
"""

HELM_GPU_RES = """            limits:
              nvidia.com/gpu: {{ .Values.gpu.count | default 1 }}
              memory: {{ .Values.resources.limits.memory | quote }}
            {{- if .Values.gpu.setRequests }}
            requests:
              nvidia.com/gpu: {{ .Values.gpu.count | default 1 }}
            {{- end }}"""

HELM_CPU_RES = "            {{- toYaml .Values.resources | nindent 12 }}"

HELM_SERVICE = """apiVersion: v1
kind: Service
metadata:
  name: {{ include "CHART.fullname" . }}
  labels:
    {{- include "CHART.labels" . | nindent 4 }}
spec:
  type: {{ .Values.service.type }}
  ports:
    - port: {{ .Values.service.port }}
      targetPort: http
      protocol: TCP
      name: http
  selector:
    app.kubernetes.io/name: {{ include "CHART.name" . }}
"""

HELM_CONFIGMAP = """{{- if .Values.config.enabled }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "CHART.fullname" . }}-config
data:
  {{- range $k, $v := .Values.config.data }}
  {{ $k }}: {{ $v | quote }}
  {{- end }}
{{- end }}
"""


def helm_template(c: Ctx, what: str) -> str:
    if what == "deployment":
        body = HELM_DEPLOYMENT.replace("RESOURCES", HELM_GPU_RES if c.gpu else HELM_CPU_RES)
        body = body.replace("COMMENT", c.rng.choice(GPU_COMMENTS if c.gpu else COMMENTS))
    elif what == "service":
        body = HELM_SERVICE
    elif what == "configmap":
        body = HELM_CONFIGMAP
    else:
        body = HELM_HELPERS
    return body.replace("CHART", c.chart)


def helm_values(c: Ctx) -> Doc:
    v: Doc = {
        "replicaCount": c.rng.choice([1, 2, 3]),
        "image": {
            "repository": c.rng.choice(GPU_IMAGES if c.gpu else IMAGES).split(":")[0],
            "pullPolicy": "IfNotPresent",
            "tag": "",
        },
        "nameOverride": "",
        "service": {"type": "ClusterIP", "port": 80},
        "autoscaling": {"enabled": False, "minReplicas": 1, "maxReplicas": 10},
        "config": {"enabled": True, "data": {"LOG_LEVEL": "info"}},
        "resources": _gpu_resources(c) if c.gpu else _cpu_resources(c),
        "nodeSelector": {},
        "tolerations": [],
        "affinity": {},
    }
    if c.gpu:
        v["gpu"] = {"count": c.rng.choice([1, 2, 4]), "setRequests": c.rng.random() < 0.5}
        if c.rng.random() < 0.6:
            v["nodeSelector"] = {"nvidia.com/gpu.product": c.rng.choice(GPU_PRODUCTS)}
        v["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    return v


def chart_yaml(c: Ctx) -> Doc:
    return {
        "apiVersion": "v2",
        "name": c.chart,
        "description": f"A Helm chart for the {c.team} {c.chart} service",
        "type": "application",
        "version": f"0.{c.rng.randint(1, 30)}.{c.rng.randint(0, 9)}",
        "appVersion": f"1.{c.rng.randint(0, 20)}.0",
    }


def kustomization(c: Ctx, resources: list[str], patches: list[str]) -> Doc:
    k: Doc = {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization"}
    if c.rng.random() < 0.5:
        k["namespace"] = c.team
    k["resources"] = resources
    if patches:
        k["patches"] = [{"path": p} for p in patches]
    k["commonLabels"] = {"app.kubernetes.io/part-of": c.team}
    if c.rng.random() < 0.5:
        k["images"] = [
            {
                "name": c.rng.choice(IMAGES).split(":")[0],
                "newTag": f"v{c.rng.randint(1, 9)}.{c.rng.randint(0, 20)}",
            }
        ]
    if c.rng.random() < 0.3:
        k["configMapGenerator"] = [{"name": f"{c.name}-env", "literals": ["MODE=prod", "REGION=eu-west-1"]}]
    return k


def kustomize_patch(c: Ctx) -> Doc:
    ct: Doc = {"name": c.name.split("-")[0]}
    if c.gpu:
        ct["resources"] = {"limits": {"nvidia.com/gpu": c.rng.choice([1, 2, 8])}}
        spec: Doc = {
            "containers": [ct],
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        }
        if c.rng.random() < 0.5:
            spec["nodeSelector"] = {"cloud.google.com/gke-accelerator": c.rng.choice(GKE_ACCEL)}
    else:
        ct["resources"] = {"limits": {"memory": "4Gi"}}
        spec = {"containers": [ct]}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": c.name},
        "spec": {"replicas": c.rng.choice([3, 5, 10]), "template": {"spec": spec}},
    }


# ------------------------------------------------------------------------------------------------------------
# Repository plan
# ------------------------------------------------------------------------------------------------------------
GPU_CAPABLE = {
    "deployment",
    "statefulset",
    "job",
    "cronjob",
    "daemonset",
    "raycluster",
    "pytorchjob",
    "jobset",
    "app-bundle",
    "helm-tpl-deployment",
    "helm-values",
    "kustomize-patch",
}


def _plan_units(rng: random.Random, n: int) -> list[FileEntry]:
    entries: list[FileEntry] = []
    seen: set[str] = set()
    seen_charts: set[str] = set()
    while len(entries) < n:
        team = rng.choice(TEAMS)
        app = _name(rng)
        kind = rng.choices(
            ["plain", "kustomize", "helm", "ml", "platform", "bundle"], [40, 15, 8, 12, 8, 17]
        )[0]
        # Charts share one flat directory, the rest live under their team: names are unique per directory.
        while (kind == "helm" and app in seen_charts) or (kind != "helm" and f"{team}/{app}" in seen):
            app = f"{app}-{rng.randint(2, 99)}"
        (seen_charts if kind == "helm" else seen).add(app if kind == "helm" else f"{team}/{app}")
        if kind == "plain":
            base = f"apps/{team}/{app}"
            roles = ["deployment", "service"] + rng.sample(
                ["configmap", "ingress", "rbac", "hpa", "secret", "statefulset", "cronjob"], rng.randint(0, 4)
            )
            files = [(f"{base}/{r}.yaml", r) for r in roles]
        elif kind == "bundle":  # one multi-doc file per app, sometimes JSON
            if rng.random() < 0.2:
                files = [(f"apps/{team}/{app}.json", "json-deployment")]
            else:
                files = [(f"apps/{team}/{app}.yaml", "app-bundle")]
        elif kind == "kustomize":
            base = f"deploy/{team}/{app}"
            files = [
                (f"{base}/base/kustomization.yaml", "kustomization"),
                (f"{base}/base/deployment.yaml", "deployment"),
                (f"{base}/base/service.yaml", "service"),
                (f"{base}/base/configmap.yaml", "configmap"),
            ]
            for ov in rng.sample(["dev", "staging", "prod"], rng.randint(1, 3)):
                files += [
                    (f"{base}/overlays/{ov}/kustomization.yaml", "kustomization"),
                    (f"{base}/overlays/{ov}/patch-deployment.yaml", "kustomize-patch"),
                ]
        elif kind == "helm":
            base = f"charts/{app}"
            files = [
                (f"{base}/Chart.yaml", "chart"),
                (f"{base}/values.yaml", "helm-values"),
                (f"{base}/templates/_helpers.tpl", "helm-tpl-helpers"),
                (f"{base}/templates/deployment.yaml", "helm-tpl-deployment"),
                (f"{base}/templates/service.yaml", "helm-tpl-service"),
            ]
            if rng.random() < 0.5:
                files.append((f"{base}/templates/configmap.yaml", "helm-tpl-configmap"))
            if rng.random() < 0.4:
                files.append((f"{base}/values-prod.yaml", "helm-values"))
        elif kind == "ml":
            base = f"ml/{team}/{app}"
            roles = rng.sample(
                [
                    "job",
                    "pytorchjob",
                    "raycluster",
                    "jobset",
                    "cronjob",
                    "deployment",
                    "service",
                    "configmap",
                ],
                rng.randint(1, 4),
            )
            files = [(f"{base}/{r}.yaml", r) for r in roles]
        else:
            base = f"platform/{team}/{app}"
            roles = rng.sample(["crd", "rbac", "daemonset", "configmap", "secret"], rng.randint(1, 3))
            files = [(f"{base}/{r}.yaml", r) for r in roles]
        for path, role in files:
            fmt = "tpl" if path.endswith(".tpl") else "json" if path.endswith(".json") else "yaml"
            entries.append(FileEntry(path=path, role=role, template="/templates/" in path, fmt=fmt))
    return entries[:n]


def plan(
    n: int, gpu_fraction: float, seed: int, fp_fraction: float = 0.005, large_cm_fraction: float = 0.006
) -> list[FileEntry]:
    rng = random.Random(f"{seed}:plan")
    entries = _plan_units(rng, n)
    # A few large ConfigMaps (dashboards, rule files) among the plain configmaps: these dominate the bytes.
    small_cms = [e for e in entries if e.role == "configmap"]
    for e in rng.sample(small_cms, min(round(n * large_cm_fraction), len(small_cms))):
        e.role = "configmap-large"
    # A third of the GPU files go to ML directories first (training jobs are GPU-heavy in real repos).
    n_gpu = round(n * gpu_fraction)
    ml = [e for e in entries if e.path.startswith("ml/") and e.role in WORKLOADS]
    for e in rng.sample(ml, min(n_gpu // 3, len(ml))):
        e.gpu = True
    rest = [e for e in entries if e.role in GPU_CAPABLE and not e.gpu]
    for e in rng.sample(rest, min(n_gpu - sum(e.gpu for e in entries), len(rest))):
        e.gpu = True
    others = [e for e in entries if not e.gpu and e.fmt != "tpl"]
    for e in rng.sample(others, min(round(n * fp_fraction), len(others))):
        e.fp = True
    for e in entries:
        e.crlf = e.fmt == "yaml" and random.Random(f"{seed}:crlf:{e.path}").random() < 0.02
    return entries


# ------------------------------------------------------------------------------------------------------------
# Rendering
# ------------------------------------------------------------------------------------------------------------
def _docs_for(e: FileEntry, c: Ctx) -> list[Doc]:
    r = e.role
    if r in WORKLOADS:
        docs = [WORKLOADS[r](c)]
        if c.rng.random() < 0.25:  # workloads often ship with their Service in the same file
            docs.append(service(c))
        return docs
    if r in ("app-bundle", "json-deployment"):
        wl = c.rng.choice(["deployment", "deployment", "statefulset", "job"])
        docs = [configmap(c), WORKLOADS[wl](c), service(c)]
        if r == "app-bundle" and c.rng.random() < 0.5:
            docs += [ingress(c)] + rbac(c)
        return docs
    simple: dict[str, Callable[[Ctx], Doc]] = {
        "service": service,
        "ingress": ingress,
        "secret": secret,
        "configmap": configmap,
        "hpa": hpa,
        "crd": crd,
        "chart": chart_yaml,
        "helm-values": helm_values,
        "kustomize-patch": kustomize_patch,
    }
    if r == "rbac":
        return rbac(c)
    if r == "configmap-large":
        return [configmap(c, large=True)]
    if r == "kustomization":
        if "/overlays/" in e.path:
            return [kustomization(c, ["../../base"], ["patch-deployment.yaml"])]
        return [kustomization(c, ["deployment.yaml", "service.yaml", "configmap.yaml"], [])]
    return [simple[r](c)]


def _add_fp_annotation(docs: list[Doc], rng: random.Random) -> None:
    k, v = rng.choice(FP_ANNOTATIONS)
    meta = docs[0].setdefault("metadata", {})
    meta.setdefault("annotations", {})[k] = v


def render(e: FileEntry, seed: int) -> bytes:
    rng = random.Random(f"{seed}:file:{e.path}")
    parts = e.path.split("/")
    team = parts[1] if parts[0] in ("apps", "deploy", "ml", "platform") else rng.choice(TEAMS)
    name = (
        parts[2]
        if parts[0] in ("deploy", "ml", "platform")
        else parts[1]
        if parts[0] == "charts"
        else parts[2]
        if len(parts) > 3
        else parts[2].rsplit(".", 1)[0]
    )
    st = _style(rng, e.gpu)
    c = Ctx(rng, name, team, e.gpu, e.fp, st, chart=parts[1] if parts[0] == "charts" else "")
    if e.template:
        text = helm_template(c, e.role.removeprefix("helm-tpl-"))
        if e.fp:
            text = f"# {rng.choice(FP_COMMENTS)}\n{text}"
    else:
        docs = _docs_for(e, c)
        fp_mode = rng.choice(["comment", "annotation"]) if e.fp else ""
        if e.fp and (fp_mode == "annotation" or e.fmt == "json"):
            _add_fp_annotation(docs, rng)
        if e.fmt == "json":
            doc: Doc = docs[0] if len(docs) == 1 else {"apiVersion": "v1", "kind": "List", "items": docs}
            text = json.dumps(doc, indent=rng.choice([2, 4, None])) + "\n"
        else:
            header: list[str] = []
            if rng.random() < 0.3:
                header += [f"# {line}".rstrip() for line in LICENSE] + [""]
            if rng.random() < 0.4:
                header.append(f"# {rng.choice(GPU_COMMENTS if e.gpu else COMMENTS)}")
            if fp_mode == "comment":
                header.append(f"# {rng.choice(FP_COMMENTS)}")
            body = dump_docs(docs, st, rng, leading_sep=rng.random() < 0.3)
            text = "\n".join(header) + ("\n" if header else "") + body
    if e.crlf:
        text = text.replace("\n", "\r\n")
    return text.encode()


@dataclass
class Summary:
    files: int
    gpu_files: int
    fp_files: int
    total_bytes: int


def generate(
    out_dir: Path,
    files: int,
    gpu_fraction: float = 0.05,
    seed: int = 1,
    fp_fraction: float = 0.005,
    index: Path | None = None,
) -> tuple[Summary, list[FileEntry]]:
    """Write the repository under `out_dir` (empty or absent); return its summary and file index."""
    entries = plan(files, gpu_fraction, seed, fp_fraction)
    total = 0
    made: set[Path] = set()
    for e in entries:
        p = out_dir / e.path
        if p.parent not in made:
            p.parent.mkdir(parents=True, exist_ok=True)
            made.add(p.parent)
        data = render(e, seed)
        p.write_bytes(data)
        total += len(data)
    summary = Summary(
        files=len(entries),
        gpu_files=sum(e.gpu for e in entries),
        fp_files=sum(e.fp for e in entries),
        total_bytes=total,
    )
    if index is not None:
        index.parent.mkdir(parents=True, exist_ok=True)
        index.write_text(
            json.dumps(
                {
                    "generator_version": GEN_VERSION,
                    "seed": seed,
                    "gpu_fraction": gpu_fraction,
                    "fp_fraction": fp_fraction,
                    "summary": asdict(summary),
                    "files": [asdict(e) for e in entries],
                },
                indent=1,
            )
            + "\n"
        )
    return summary, entries


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--gpu-fraction", type=float, default=0.05)
    ap.add_argument(
        "--fp-fraction",
        type=float,
        default=0.005,
        help="fraction of non-GPU files mentioning nvidia.com in a comment/annotation (prefilter FPs)",
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--index", type=Path, help="write a JSON index of the generated files here")
    a = ap.parse_args(argv)
    if a.out_dir.exists() and any(a.out_dir.iterdir()):
        ap.error(f"{a.out_dir} exists and is not empty")
    s, _ = generate(a.out_dir, a.files, a.gpu_fraction, a.seed, a.fp_fraction, a.index)
    print(
        f"{s.files} files ({s.gpu_files} with GPUs, {s.fp_files} prefilter false positives), "
        f"{s.total_bytes / 1e6:.1f} MB in {a.out_dir}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
