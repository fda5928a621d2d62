"""gRPC client of fusiond.v1.FusionCompiler, and a small FusionGraph builder."""

import json

import grpc

from . import cache_pb2, fusion_pb2, service_pb2, service_pb2_grpc

_MAX_MESSAGE_BYTES = 64 << 20


class FusionError(Exception):
    """An RPC that failed: `code` is the grpc.StatusCode, `details` the message."""

    def __init__(self, code, details):
        super().__init__(f"{code.name}: {details}")
        self.code = code
        self.details = details


class CompileResult:
    """One compiled fusion as the daemon returned it."""

    def __init__(self, response):
        self.response = response

    @property
    def cache(self):
        """"hit" or "miss"."""
        return "hit" if self.response.cache == service_pb2.HIT else "miss"

    @property
    def compiled(self):
        """The fusiond.v1.CompiledFusion (segments, kernels, report)."""
        return self.response.result

    @property
    def segments(self):
        return list(self.response.result.segments)

    def segment_graph(self, index):
        """Segment `index` as a fusion_pb2.FusionGraph (asked for with report=True)."""
        return fusion_pb2.FusionGraph.FromString(self.response.result.segments[index].graph)

    @property
    def kernels(self):
        """The kernel of every segment that has one, in order."""
        return [s.kernel for s in self.response.result.segments if s.HasField("kernel")]

    def report(self):
        """The `fusionc compile --json` report as a dict, with "cache"
        (the request must ask for it: report=True)."""
        if not self.response.result.report_json:
            raise ValueError("this reply carries no report; compile with report=True")
        report = json.loads(self.response.result.report_json)
        return {"cache": self.cache, **report}

    def manifests(self):
        """Each kernel's launch recipe (manifest JSON) as a dict."""
        return [json.loads(k.manifest_json) if k.manifest_json else {} for k in self.kernels]

    def load(self):
        """The compiled fusion ready to launch on torch tensors:
        a fusiond.runtime.LoadedFusion (call it with the inputs)."""
        from . import runtime  # lazily: torch and the driver only when launching
        manifest_json = self.response.result.manifest_json
        if not manifest_json:
            raise runtime.Unavailable("the daemon generated no kernels (no NVRTC there?)")
        manifest = runtime.parse_manifest(manifest_json)
        kernels = self.kernels
        if len(kernels) != len(manifest.kernels):
            raise runtime.InvalidArgument(
                f"manifest names {len(manifest.kernels)} kernels, the reply has {len(kernels)}")
        binaries = {spec.binary: k.binary for spec, k in zip(manifest.kernels, kernels)}
        return runtime.LoadedFusion(manifest, binaries)


def make_request(graph, shapes=None, arch="sm_90", allow_precision_increase=False,
                 general_kernels=False, source=False, report=False):
    """A CompileRequest: `graph` a fusion_pb2.FusionGraph (or its bytes),
    `shapes` one list of sizes per graph input (needed for symbolic ones).
    The kernels are for those shapes (their manifest's `requires` says which
    others they run at) unless `general_kernels`: then they run at every
    shape and alignment, and compile ~1.4x slower. The reply carries what a
    launch needs; `source` adds each kernel's CUDA C++, `report` the compile
    report (report_json, passes, segment graphs and reasons)."""
    request = service_pb2.CompileRequest()
    if isinstance(graph, (bytes, bytearray)):
        request.graph.ParseFromString(bytes(graph))
    else:
        request.graph.CopyFrom(graph)
    for shape in shapes or []:
        request.signature.inputs.add().sizes.extend(int(d) for d in shape)
    request.options.arch = arch
    request.options.allow_precision_increase = allow_precision_increase
    request.options.general_kernels = general_kernels
    request.include_source = source
    request.include_report = report
    return request


def _check_token(token):
    """A bearer token must be printable ASCII without spaces (what gRPC
    metadata carries); gRPC's own refusal would quote the whole token."""
    for i, ch in enumerate(token):
        if not "!" <= ch <= "~":
            raise ValueError(f"the bearer token has a character gRPC metadata cannot carry "
                             f"(code point {ord(ch)} at position {i}); tokens are printable "
                             f"ASCII without spaces")


class _BearerToken(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):
    """Adds "authorization: Bearer TOKEN" to every call (also over plaintext
    on loopback, where gRPC's call credentials are not allowed)."""

    def __init__(self, token):
        _check_token(token)
        self._metadata = ("authorization", "Bearer " + token)

    def _with_token(self, details):
        metadata = list(details.metadata or []) + [self._metadata]
        return details._replace(metadata=metadata) if hasattr(details, "_replace") else \
            _CallDetails(details.method, details.timeout, metadata, details.credentials,
                         getattr(details, "wait_for_ready", None),
                         getattr(details, "compression", None))

    def intercept_unary_unary(self, continuation, details, request):
        return continuation(self._with_token(details), request)

    def intercept_unary_stream(self, continuation, details, request):
        return continuation(self._with_token(details), request)


class _CallDetails(grpc.ClientCallDetails):
    def __init__(self, method, timeout, metadata, credentials, wait_for_ready, compression):
        self.method = method
        self.timeout = timeout
        self.metadata = metadata
        self.credentials = credentials
        self.wait_for_ready = wait_for_ready
        self.compression = compression


def read_token_file(path):
    """The first token line of a token file ('#' comments skipped)."""
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                return line
    raise ValueError(f"token file {path} holds no token")


def make_channel(target, ca_file=None, cert_file=None, key_file=None, token=None,
                 server_name=None, max_message_bytes=_MAX_MESSAGE_BYTES):
    """A gRPC channel to fusiond: TLS when `ca_file` (PEM CA of the daemon's
    certificate) or a client certificate (`cert_file`, `key_file`) is given,
    else plaintext; `token` goes with every call as a bearer token;
    `server_name` overrides the name the daemon's certificate must carry."""
    options = [("grpc.max_receive_message_length", max_message_bytes),
               ("grpc.max_send_message_length", max_message_bytes)]
    if ca_file or cert_file:
        def read(path):
            with open(path, "rb") as f:
                return f.read()
        credentials = grpc.ssl_channel_credentials(
            root_certificates=read(ca_file) if ca_file else None,
            private_key=read(key_file) if key_file else None,
            certificate_chain=read(cert_file) if cert_file else None)
        if server_name:
            options.append(("grpc.ssl_target_name_override", server_name))
        channel = grpc.secure_channel(target, credentials, options=options)
    else:
        channel = grpc.insecure_channel(target, options=options)
    return grpc.intercept_channel(channel, _BearerToken(token)) if token else channel


class FusionClient:
    """A connection to one fusiond. Thread safe (one gRPC channel).
    TLS and bearer tokens: see make_channel (`token_file` reads the token)."""

    def __init__(self, target, timeout=60.0, max_message_bytes=_MAX_MESSAGE_BYTES,
                 ca_file=None, cert_file=None, key_file=None, token=None, token_file=None,
                 server_name=None):
        self.target = target
        self.timeout = timeout
        if token_file and not token:
            token = read_token_file(token_file)
        self._channel = make_channel(target, ca_file, cert_file, key_file, token, server_name,
                                     max_message_bytes)
        self._stub = service_pb2_grpc.FusionCompilerStub(self._channel)

    def close(self):
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _call(self, method, request, timeout):
        try:
            return method(request, timeout=self.timeout if timeout is None else timeout)
        except grpc.RpcError as e:
            raise FusionError(e.code(), e.details()) from None

    def compile(self, graph, shapes=None, arch="sm_90", allow_precision_increase=False,
                timeout=None, general_kernels=False, source=False, report=False):
        """Compiles (or fetches from the cache) one fusion -> CompileResult
        (with the CUDA source and the report when `source` / `report`)."""
        request = make_request(graph, shapes, arch, allow_precision_increase, general_kernels,
                               source, report)
        return CompileResult(self._call(self._stub.Compile, request, timeout))

    def compile_request(self, request, timeout=None):
        return CompileResult(self._call(self._stub.Compile, request, timeout))

    def lookup(self, graph, shapes=None, arch="sm_90", allow_precision_increase=False,
               timeout=None, general_kernels=False, source=False, report=False):
        """The cached result, or None on a miss; never compiles."""
        request = make_request(graph, shapes, arch, allow_precision_increase, general_kernels,
                               source, report)
        try:
            return CompileResult(self._call(self._stub.Lookup, request, timeout))
        except FusionError as e:
            if e.code == grpc.StatusCode.NOT_FOUND:
                return None
            raise

    def compile_stream(self, requests, timeout=None):
        """Yields (index, CompileResult or FusionError) as each finishes."""
        stream_request = service_pb2.CompileStreamRequest(requests=list(requests))
        try:
            for item in self._stub.CompileStream(
                    stream_request, timeout=self.timeout if timeout is None else timeout):
                if item.code == 0:
                    yield item.index, CompileResult(item.response)
                else:
                    yield item.index, FusionError(grpc.StatusCode(_code_tuple(item.code)),
                                                  item.message)
        except grpc.RpcError as e:
            raise FusionError(e.code(), e.details()) from None

    def stats(self, timeout=None):
        """The daemon's counters as a dict."""
        response = self._call(self._stub.Stats, service_pb2.StatsRequest(), timeout)
        return {f.name: getattr(response, f.name) for f in response.DESCRIPTOR.fields}

    def health(self, timeout=5.0):
        """grpc.health.v1 status of the server: "SERVING", "NOT_SERVING", ...
        (hand-encoded messages: Debian ships no grpc_health module)."""
        check = self._channel.unary_unary(
            "/grpc.health.v1.Health/Check",
            request_serializer=lambda b: b, response_deserializer=lambda b: b)
        try:
            raw = check(b"", timeout=timeout)  # HealthCheckRequest{service: ""}
        except grpc.RpcError as e:
            raise FusionError(e.code(), e.details()) from None
        status = raw[1] if len(raw) >= 2 and raw[0] == 0x08 else 0
        return {0: "UNKNOWN", 1: "SERVING", 2: "NOT_SERVING", 3: "SERVICE_UNKNOWN"}.get(
            status, "UNKNOWN")

    def wait_ready(self, timeout=10.0):
        """Blocks until the channel connects; raises FusionError otherwise."""
        try:
            grpc.channel_ready_future(self._channel).result(timeout=timeout)
        except grpc.FutureTimeoutError:
            raise FusionError(grpc.StatusCode.UNAVAILABLE,
                              f"no fusiond at {self.target} after {timeout}s") from None


def _code_tuple(number):
    for code in grpc.StatusCode:
        if code.value[0] == number:
            return code.value
    return grpc.StatusCode.UNKNOWN.value


class GraphBuilder:
    """Builds a fusion_pb2.FusionGraph by hand (what front ends send).

        b = GraphBuilder()
        x = b.define_tensor([-1, -1], "bfloat16")
        y = b.op("cast", x, dtype="float32")
        b.add_output(b.op("mul", y, b.define_constant(2.0)))
        graph = b.build()

    Value references follow fusion.proto: inputs first, then constants, then
    node outputs; the builder keeps that order by deferring numbering.
    """

    def __init__(self):
        self._inputs = []     # fusion_pb2.Input
        self._constants = []  # fusion_pb2.Constant
        self._nodes = []      # (fusion_pb2.Node, [operand handles], n_outputs)
        self._outputs = []

    @staticmethod
    def _dtype(name):
        return fusion_pb2.DataType.Value(name.upper()) if isinstance(name, str) else name

    def define_tensor(self, sizes, dtype="float32", name=""):
        self._inputs.append(fusion_pb2.Input(
            name=name, dtype=self._dtype(dtype), is_tensor=True, sizes=list(sizes)))
        return ("input", len(self._inputs) - 1)

    def define_scalar(self, dtype="float64", name=""):
        self._inputs.append(fusion_pb2.Input(name=name, dtype=self._dtype(dtype)))
        return ("input", len(self._inputs) - 1)

    def define_constant(self, value, dtype="float64", name=""):
        self._constants.append(fusion_pb2.Constant(
            name=name, dtype=self._dtype(dtype), value=float(value)))
        return ("constant", len(self._constants) - 1)

    def op(self, kind, *operands, outputs=1, dtype=None, **attrs):
        """A node of OpKind `kind` ("add", "sum", ...); attrs are Node fields
        (dims=[1], keepdim=True, broadcast_dims=[0], ...). Returns the output
        handle (a tuple of two for outputs=2)."""
        node = fusion_pb2.Node(op=fusion_pb2.OpKind.Value(kind.upper()), **attrs)
        if dtype is not None:
            node.dtype = self._dtype(dtype)
        self._nodes.append((node, list(operands), outputs))
        index = len(self._nodes) - 1
        handles = tuple(("node", index, k) for k in range(outputs))
        return handles[0] if outputs == 1 else handles

    def add_output(self, handle):
        self._outputs.append(handle)

    def build(self):
        first_node_value = len(self._inputs) + len(self._constants)
        node_base = []
        for _, _, n in self._nodes:
            node_base.append(first_node_value)
            first_node_value += n

        def ref(h):
            if h[0] == "input":
                return h[1]
            if h[0] == "constant":
                return len(self._inputs) + h[1]
            return node_base[h[1]] + h[2]

        graph = fusion_pb2.FusionGraph(version=1)
        graph.inputs.extend(self._inputs)
        graph.constants.extend(self._constants)
        for node, operands, _ in self._nodes:
            n = graph.nodes.add()
            n.CopyFrom(node)
            n.operands.extend(ref(h) for h in operands)
        graph.outputs.extend(ref(h) for h in self._outputs)
        return graph
