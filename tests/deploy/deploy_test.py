#!/usr/bin/env python3
"""Tests of deploy/ and of the daemon's observability.

FilesTest: the Kubernetes manifests parse and fit together, every config key
is a fusiond flag, the systemd unit waits for readiness and outlasts the
drain, promtool checks and unit-tests the alert rules, the dashboard parses,
`fusiond --version` and `fusionc --version` print the version CMake defines,
and the container file builds where a container engine is present.

LiveDaemonTest: a real fusiond (and a real redis-server and Prometheus) on
loopback: every metric the alert rules and the dashboard name is in its
/metrics, every dashboard query is valid PromQL for a real Prometheus,
hits are split by tier, failed RPCs are logged with code, request id and
peer, health answers for fusiond.v1.FusionCompiler, and systemd's READY=1 /
STOPPING=1 arrive on $NOTIFY_SOCKET.

Run by CTest (tests/deploy/CMakeLists.txt sets the environment):
    deploy_test.py [TestCase[.test_name] ...]
"""

import glob
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import unittest

import grpc
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "service"))
import daemon as d  # noqa: E402
import fusiond  # noqa: E402
from fusiond import service_pb2  # noqa: E402

SOURCE = os.path.abspath(os.environ.get("FUSIOND_SOURCE_DIR", os.path.join(HERE, "..", "..")))
DEPLOY = os.path.join(SOURCE, "deploy")
FUSIONC_BIN = os.environ.get("FUSIONC_BIN", "fusionc")
VERSION = os.environ.get("FUSIOND_VERSION", "")
PROMTOOL = os.environ.get("PROMTOOL_BIN", shutil.which("promtool") or "/usr/bin/promtool")
SERVICE_NAME = "fusiond.v1.FusionCompiler"


def load_yaml_docs(path):
    with open(path) as f:
        return [doc for doc in yaml.safe_load_all(f) if doc is not None]


def k8s_objects():
    objects = {}
    for path in sorted(glob.glob(os.path.join(DEPLOY, "k8s", "*.yaml"))):
        if os.path.basename(path) == "kustomization.yaml":
            continue
        for doc in load_yaml_docs(path):
            for field in ("apiVersion", "kind", "metadata"):
                assert field in doc, f"{path}: an object without {field}"
            objects[(doc["kind"], doc["metadata"]["name"])] = doc
    return objects


def conf_settings(text, include_commented=False):
    """`key = value` lines of a fusiond config (commented examples too when asked)."""
    settings = {}
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("#"):
            if not include_commented:
                continue
            line = line.lstrip("#").strip()
            if not re.match(r"^[a-z][a-z0-9-]* = \S", line):
                continue
        if "=" in line:
            key, value = line.split("=", 1)
            settings[key.strip()] = value.strip()
    return settings


def rule_exprs():
    with open(os.path.join(DEPLOY, "prometheus", "alerts.yml")) as f:
        rules = yaml.safe_load(f)
    return [r["expr"] for g in rules["groups"] for r in g["rules"]]


def dashboard():
    with open(os.path.join(DEPLOY, "grafana", "fusiond-dashboard.json")) as f:
        return json.load(f)


def dashboard_panels(panels=None):
    """Every panel, including those inside (collapsed) rows."""
    for p in dashboard()["panels"] if panels is None else panels:
        yield p
        yield from dashboard_panels(p.get("panels", []))


def dashboard_exprs():
    return [t["expr"] for p in dashboard_panels() for t in p.get("targets", [])]


def dashboard_variable_queries():
    """The template variables' queries (label_values(...): Grafana's, not PromQL)."""
    out = []
    for v in dashboard().get("templating", {}).get("list", []):
        q = v.get("query")
        if isinstance(q, dict):
            q = q.get("query")
        if v.get("type") == "query" and q:
            out.append(q)
    return out


def metric_names(exprs):
    """The fusiond_* and process_* series an expression reads."""
    names = set()
    for e in exprs:
        names.update(re.findall(r"\b((?:fusiond|process)_[a-z0-9_]+)\b", e))
    return names


def fusiond_help():
    return subprocess.run([d.FUSIOND_BIN, "--help"], capture_output=True, text=True,
                          timeout=30, check=True).stdout


class FilesTest(unittest.TestCase):
    def test_manifests_parse_and_fit_together(self):
        objects = k8s_objects()
        sts = objects[("StatefulSet", "fusiond")]
        pod = sts["spec"]["template"]["spec"]
        container = pod["containers"][0]
        conf = conf_settings(objects[("ConfigMap", "fusiond-config")]["data"]["fusiond.conf"])
        # The cache lives on the claim template's volume, where the config says.
        claims = [c["metadata"]["name"] for c in sts["spec"]["volumeClaimTemplates"]]
        mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
        self.assertIn("cache", claims)
        self.assertEqual(mounts["cache"], conf["cache-dir"])
        # Probes: gRPC health on the plaintext health port, by service name
        # for readiness and start-up.
        ports = {p["name"]: p["containerPort"] for p in container["ports"]}
        self.assertEqual(int(conf["health-listen"].rsplit(":", 1)[1]), ports["health"])
        self.assertEqual(int(conf["listen"].rsplit(":", 1)[1]), ports["grpc"])
        self.assertEqual(int(conf["metrics"].rsplit(":", 1)[1]), ports["metrics"])
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            self.assertEqual(container[probe]["grpc"]["port"], ports["health"], probe)
        for probe in ("startupProbe", "readinessProbe"):
            self.assertEqual(container[probe]["grpc"]["service"], SERVICE_NAME, probe)
        # Every Secret mounted is one secrets.example.yaml describes, and the
        # files the config names are inside their mounts.
        secret_volumes = {v["name"]: v["secret"]["secretName"] for v in pod["volumes"]
                          if "secret" in v}
        for volume, secret in secret_volumes.items():
            self.assertIn(("Secret", secret), objects, f"volume {volume}")
        for key in ("tls-cert", "tls-key", "token-file", "redis-secret-file",
                    "redis-password-file"):
            self.assertTrue(any(conf[key].startswith(mounts[v] + "/") for v in secret_volumes),
                            f"{key} = {conf[key]} is not in a mounted Secret")
        # The pod outlives the drain: preStop sleep + grace < termination grace.
        pre_stop = int(container["lifecycle"]["preStop"]["exec"]["command"][-1])
        self.assertGreater(pod["terminationGracePeriodSeconds"],
                           pre_stop + int(conf["shutdown-grace-s"]))
        # Services select the pods; Redis is where the config points.
        labels = sts["spec"]["template"]["metadata"]["labels"]
        for name in ("fusiond", "fusiond-headless"):
            for k, v in objects[("Service", name)]["spec"]["selector"].items():
                self.assertEqual(labels.get(k), v, name)
        self.assertEqual(sts["spec"]["serviceName"], "fusiond-headless")
        redis_host, redis_port = conf["redis"].rsplit(":", 1)
        redis_svc = objects[("Service", redis_host)]
        self.assertEqual(redis_svc["spec"]["ports"][0]["port"], int(redis_port))
        self.assertIn(("Deployment", redis_host), objects)
        # The kustomization lists files that exist.
        kust = load_yaml_docs(os.path.join(DEPLOY, "k8s", "kustomization.yaml"))[0]
        for resource in kust["resources"]:
            self.assertTrue(os.path.exists(os.path.join(DEPLOY, "k8s", resource)), resource)
        # The in-cluster Prometheus config is YAML inside the ConfigMap.
        prom = yaml.safe_load(objects[("ConfigMap", "fusiond-prometheus")]["data"]["prometheus.yml"])
        self.assertEqual(prom["scrape_configs"][0]["job_name"], "fusiond")

    def test_every_config_key_is_a_flag(self):
        flags = set(re.findall(r"--([a-z][a-z0-9-]*)", fusiond_help()))
        with open(os.path.join(DEPLOY, "fusiond.conf.example")) as f:
            example = conf_settings(f.read(), include_commented=True)
        cm = k8s_objects()[("ConfigMap", "fusiond-config")]["data"]["fusiond.conf"]
        for source, settings in (("fusiond.conf.example", example),
                                 ("k8s ConfigMap", conf_settings(cm))):
            self.assertTrue(settings, source)
            for key in settings:
                self.assertIn(key, flags, f"{source}: '{key}' is not a fusiond flag")

    def test_systemd_unit_waits_for_readiness_and_outlasts_the_drain(self):
        with open(os.path.join(DEPLOY, "fusiond.service")) as f:
            unit = dict(line.strip().split("=", 1) for line in f
                        if "=" in line and not line.lstrip().startswith("#"))
        self.assertEqual(unit["Type"], "notify")
        with open(os.path.join(DEPLOY, "fusiond.conf.example")) as f:
            example = conf_settings(f.read())
        default = re.search(r"--shutdown-grace-s N.*?\(default (\d+)\)", fusiond_help(), re.S)
        grace = int(example.get("shutdown-grace-s", default.group(1)))
        self.assertGreater(int(unit["TimeoutStopSec"]), grace)

    def test_promtool_checks_and_unit_tests_the_rules(self):
        # Never skipped: scripts/setup.sh installs Debian's prometheus, which ships promtool.
        self.assertTrue(os.path.exists(PROMTOOL),
                        f"promtool not found at {PROMTOOL}: run scripts/setup.sh (Debian's "
                        "prometheus package ships it)")
        for args in (["check", "rules", os.path.join(DEPLOY, "prometheus", "alerts.yml")],
                     ["check", "config", os.path.join(DEPLOY, "prometheus", "prometheus.yml")],
                     ["test", "rules", os.path.join(HERE, "alerts_test.yml")]):
            r = subprocess.run([PROMTOOL, *args], capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, f"promtool {' '.join(args)}:\n{r.stdout}{r.stderr}")

    def test_dashboard_has_the_panels_operators_need(self):
        dash = dashboard()
        titles = " | ".join(p["title"].lower() for p in dash["panels"])
        for needed in ("per stage", "hit ratio by tier", "scheduler", "registers", "spill",
                       "queue depth"):
            self.assertIn(needed, titles)
        ids = [p["id"] for p in dash["panels"]]
        self.assertEqual(len(ids), len(set(ids)), "panel ids must be unique")

    def test_version(self):
        self.assertTrue(VERSION, "FUSIOND_VERSION (CMake's PROJECT_VERSION) not set")
        for binary, name in ((d.FUSIOND_BIN, "fusiond"), (FUSIONC_BIN, "fusionc")):
            r = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertTrue(r.stdout.startswith(f"{name} {VERSION} ("), r.stdout)
        self.assertIn("NVRTC", subprocess.run([d.FUSIOND_BIN, "--version"], capture_output=True,
                                              text=True, timeout=30).stdout)
        self.assertEqual(fusiond.__version__, VERSION,
                         "client/python/fusiond/_version.py differs from CMake's version")

    def test_container_build_stage_has_every_build_dependency(self):
        build = dockerfile_apt_packages()[0]
        missing = sorted(setup_packages() - TEST_ONLY_PACKAGES - build)
        self.assertFalse(missing, "scripts/setup.sh installs packages the Dockerfile's build stage "
                                  "lacks (add them there, or to TEST_ONLY_PACKAGES if only tests "
                                  "need them)")

    def test_container_image_has_the_libraries_the_binaries_link(self):
        """Without an engine to build with: every library fusiond and fusionc link
        directly comes from a package the final stage installs (or one it depends on)."""
        for tool in ("readelf", "dpkg-query", "dpkg"):
            if shutil.which(tool) is None:
                self.skipTest(f"{tool} not found: cannot map libraries to Debian packages")
        final = installed_depends_closure(dockerfile_apt_packages()[-1])
        for binary in (d.FUSIOND_BIN, FUSIONC_BIN):
            dynamic = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True,
                                     timeout=30, check=True).stdout
            for soname in re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic):
                if soname.startswith(BASE_IMAGE_LIBS):
                    continue
                package = owning_package(soname)
                self.assertIsNotNone(package, f"{binary}: no Debian package holds {soname}")
                self.assertIn(package, final, f"{os.path.basename(binary)} links {soname} "
                                              f"({package}), which the final image lacks")

    def test_container_file_builds(self):
        engine = next((e for e in ("docker", "podman") if shutil.which(e)), None)
        if engine is None:
            self.skipTest("no container tool (docker, podman) installed")
        info = subprocess.run([engine, "info"], capture_output=True, text=True, timeout=60)
        if info.returncode != 0:
            self.skipTest(f"{engine} has no engine to build with here: "
                          f"{(info.stderr or info.stdout).strip().splitlines()[-1:]}")
        r = subprocess.run([engine, "build", "-f", os.path.join(DEPLOY, "Dockerfile"),
                            "-t", f"fusiond-test:{VERSION or 'dev'}", SOURCE],
                           capture_output=True, text=True, timeout=3600)
        self.assertEqual(r.returncode, 0, r.stdout[-3000:] + r.stderr[-3000:])
        run = subprocess.run([engine, "run", "--rm", f"fusiond-test:{VERSION or 'dev'}",
                              "--version"], capture_output=True, text=True, timeout=120)
        self.assertIn(f"fusiond {VERSION}", run.stdout, run.stderr)


# setup.sh packages the image's build does not need (tests, tools, docs).
TEST_ONLY_PACKAGES = {"redis-server", "openssl", "prometheus", "python3-numpy", "python3-yaml",
                      "curl", "clang-format"}
# Libraries every Debian image has, and NVRTC (copied from the build stage).
BASE_IMAGE_LIBS = ("libc.so", "libm.so", "libstdc++.so", "libgcc_s.so", "ld-linux", "libz.so",
                   "libdl.so", "librt.so", "libpthread.so", "libnvrtc")


def dockerfile_apt_packages():
    """Packages each stage of deploy/Dockerfile installs with apt-get, in stage order."""
    with open(os.path.join(DEPLOY, "Dockerfile")) as f:
        text = f.read().replace("\\\n", " ")
    stages = re.split(r"^FROM\s", text, flags=re.M)[1:]
    out = []
    for stage in stages:
        pkgs = set()
        for m in re.finditer(r"apt-get install ([^&\n]*)", stage):
            pkgs.update(w for w in m.group(1).split() if not w.startswith("-"))
        out.append(pkgs)
    return out


def setup_packages():
    with open(os.path.join(SOURCE, "scripts", "setup.sh")) as f:
        m = re.search(r"^PKGS=\((.*?)^\)", f.read(), re.S | re.M)
    return set(m.group(1).split())


def installed_depends_closure(packages):
    """`packages` and, through dpkg's records of what is installed here, what they depend on."""
    seen, todo = set(), list(packages)
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        r = subprocess.run(["dpkg-query", "-W", "-f=${Depends}", p], capture_output=True,
                           text=True, timeout=30)
        for alternative in r.stdout.split(","):
            name = alternative.split("|")[0].split("(")[0].strip().split(":")[0]
            if name:
                todo.append(name)
    return seen


def owning_package(soname):
    """The Debian package holding the library `soname` here, or None."""
    ldconfig = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True, timeout=30)
    for line in ldconfig.stdout.splitlines():
        parts = line.split()
        if parts and parts[0] == soname:
            path = os.path.realpath(parts[-1])
            r = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True, timeout=30)
            if r.returncode == 0:
                return r.stdout.split(":")[0].strip()
    return None


def health_check(target, service):
    """grpc.health.v1 Check for `service`: status name, or the error's code name."""
    channel = grpc.insecure_channel(target)
    try:
        check = channel.unary_unary("/grpc.health.v1.Health/Check",
                                    request_serializer=lambda b: b,
                                    response_deserializer=lambda b: b)
        name = service.encode()
        try:
            raw = check(b"\x0a" + bytes([len(name)]) + name, timeout=5)
        except grpc.RpcError as e:
            return e.code().name
        status = raw[1] if len(raw) >= 2 and raw[0] == 0x08 else 0
        return {0: "UNKNOWN", 1: "SERVING", 2: "NOT_SERVING"}.get(status, "UNKNOWN")
    finally:
        channel.close()


def exported_families(text):
    """Metric names of a /metrics page (families, and each sample's name)."""
    names = set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            names.add(line.split()[2])
        elif line and not line.startswith("#"):
            names.add(re.split(r"[{ ]", line, 1)[0])
    return names


class LiveDaemonTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = d.TempDir("fusiond-deploy-")
        cls.redis = d.Redis(cls.tmp.path).start()
        cls.notify_path = os.path.join(cls.tmp.path, "notify.sock")
        cls.notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        cls.notify.bind(cls.notify_path)
        cls.notify.settimeout(60)
        cls.daemon = d.Daemon(
            os.path.join(cls.tmp.path, "cache"),
            ["--redis", cls.redis.address, "--redis-insecure-unsigned", "true",
             "--log-level", "debug", "--slow-compile-ms", "1"])
        os.environ["NOTIFY_SOCKET"] = cls.notify_path
        try:
            cls.daemon.start()
        finally:
            del os.environ["NOTIFY_SOCKET"]
        cls.ready_message = cls.notify.recv(256)

    @classmethod
    def tearDownClass(cls):
        cls.daemon.stop()
        cls.redis.stop()
        cls.notify.close()
        cls.tmp.cleanup()

    def test_a_traffic_then_every_named_metric_exists(self):
        client = self.daemon.client
        graph = d.scaled_graph(3.5, 64, 256)
        self.assertEqual(client.compile(graph).cache, "miss")
        self.assertEqual(client.compile(graph).cache, "hit")
        with self.assertRaises(fusiond.FusionError):
            client.compile(d.invalid_graph())
        text = self.daemon.metrics_text()
        exported = exported_families(text)
        for source, names in (("alerts.yml", metric_names(rule_exprs())),
                              ("fusiond-dashboard.json",
                               metric_names(dashboard_exprs() + dashboard_variable_queries()))):
            missing = sorted(n for n in names if n not in exported)
            self.assertFalse(missing, f"{source} names metrics the daemon does not export")
        self.assertIn('fusiond_build_info{codegen="codegen-', text)
        self.assertRegex(text, r'fusiond_build_info\{[^}]*version="%s"' % re.escape(VERSION))
        self.assertGreater(d.metric(text, "process_resident_memory_bytes"), 1 << 20)
        self.assertGreater(d.metric(text, "process_open_fds"), 3)
        self.assertGreaterEqual(
            d.metric(text, 'fusiond_compile_outcomes_total{outcome="ok"}'), 1)
        hits = [float(m.group(1)) for m in re.finditer(
            r'^fusiond_cache_tier_hits_total\{tier="(?:memory|rocksdb)"\} (\S+)$', text, re.M)]
        self.assertEqual(len(hits), 2)
        self.assertGreaterEqual(sum(hits), 1)
        # The compile logs name the fusion by its canonical hash.
        log = self.daemon.log()
        for event in ("compiled", "slow_compile", "compile_stages"):
            line = next((l for l in log.splitlines() if f'"event":"{event}"' in l), None)
            self.assertIsNotNone(line, f"no {event} line in the log")
            self.assertRegex(line, r'"canonical_hash":"[0-9a-f]+"')

    def test_dashboard_queries_are_valid_promql(self):
        prom = d.Prometheus(f"127.0.0.1:{self.daemon.metrics_port}", self.tmp.path).start()
        try:
            d.wait_until(lambda: prom.value('up{job="fusiond"}') == 1, 30, "a first scrape")
            for expr in dashboard_exprs():
                q = (expr.replace("$__rate_interval", "1m").replace("$__range", "1h")
                     .replace("$instance", ".*"))
                prom.query(q)  # raises on a parse or evaluation error
        finally:
            prom.stop()

    def test_failed_rpcs_are_logged_with_code_request_id_and_peer(self):
        channel = grpc.insecure_channel(self.daemon.target)
        try:
            lookup = channel.unary_unary(
                "/fusiond.v1.FusionCompiler/Lookup",
                request_serializer=service_pb2.CompileRequest.SerializeToString,
                response_deserializer=service_pb2.CompileResponse.FromString)
            request = service_pb2.CompileRequest()
            request.graph.CopyFrom(d.invalid_graph())
            with self.assertRaises(grpc.RpcError) as e:
                lookup(request, timeout=30, metadata=[("x-request-id", "deploy-test-42")])
            self.assertEqual(e.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
            self.assertIn(("x-request-id", "deploy-test-42"), e.exception.trailing_metadata())
            # Without an id the daemon makes one and returns it.
            with self.assertRaises(grpc.RpcError) as e:
                lookup(request, timeout=30)
            ids = [v for k, v in e.exception.trailing_metadata() if k == "x-request-id"]
            self.assertEqual(len(ids), 1)
            self.assertNotEqual(ids[0], "deploy-test-42")
        finally:
            channel.close()

        def logged():
            for line in self.daemon.log().splitlines():
                if '"request_id":"deploy-test-42"' in line:
                    return json.loads(line)
            return None
        entry = d.wait_until(logged, 10, "the rpc_failed line")
        self.assertEqual(entry["event"], "rpc_failed")
        self.assertEqual(entry["level"], "warning")
        self.assertEqual(entry["code"], "INVALID_ARGUMENT")
        self.assertEqual(entry["rpc"], "/fusiond.v1.FusionCompiler/Lookup")
        self.assertIn("127.0.0.1", entry["peer"])
        self.assertTrue(entry["message"])
        # --log-level debug: successful RPCs too.
        self.assertIn('"event":"rpc","rpc":"/grpc.health.v1.Health/Check","code":"OK"',
                      self.daemon.log())

    def test_health_answers_for_the_service_name(self):
        self.assertEqual(health_check(self.daemon.target, ""), "SERVING")
        self.assertEqual(health_check(self.daemon.target, SERVICE_NAME), "SERVING")
        self.assertEqual(health_check(self.daemon.target, "no.such.Service"), "NOT_FOUND")

    def test_z_systemd_ready_then_stopping(self):
        # Runs last (name order): it stops the daemon.
        self.assertEqual(self.ready_message, b"READY=1")
        self.assertEqual(self.daemon.stop(), 0)
        self.assertEqual(self.notify.recv(256), b"STOPPING=1")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1] + sys.argv[1:], verbosity=2)
