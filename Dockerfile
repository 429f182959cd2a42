# The guard HTTP service: FastAPI under uvicorn, Prometheus metrics on /metrics, OTLP traces.
# Build:  docker build -t guard .
# Run:    docker run -p 8080:8080 -e GUARD_API_TOKEN="$(openssl rand -hex 32)" guard
# It listens on 0.0.0.0, so `guard serve` refuses to start without GUARD_API_TOKEN; to run it open
# deliberately (a private network, a sidecar), append the flag: docker run ... guard --insecure
# Installs the extras service, telemetry and redis only: the `semantic` extra (torch,
# sentence-transformers) is deliberately left out, and the build fails if torch slips in.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# Only what the wheel build needs (see .dockerignore): metadata first, then the packages.
COPY pyproject.toml README.md ./
COPY guard ./guard
COPY graphs ./graphs
COPY benchmarks ./benchmarks

# guard.telemetry exports traces with the OTLP exporter package when it is installed; the gRPC one
# matches OTEL_EXPORTER_OTLP_PROTOCOL=grpc and the collector's port 4317 (deploy/docker-compose.yml).
RUN pip install --no-cache-dir ".[service,telemetry,redis]" "opentelemetry-exporter-otlp-proto-grpc>=1.25" \
 && python -c "import importlib.util, sys; sys.exit('torch must not be in the service image' if importlib.util.find_spec('torch') else 0)" \
 && rm -rf /app/build /app/*.egg-info

# A fixed numeric UID, so Kubernetes' runAsNonRoot can verify it.
RUN groupadd --system --gid 10001 guard \
 && useradd --system --uid 10001 --gid guard --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin guard \
 && mkdir -p /etc/guard /tmp/guard-metrics \
 && chown guard:guard /tmp/guard-metrics

# The default policy location; mount a file over it (compose) or a ConfigMap (Kubernetes).
ENV GUARD_POLICY=/etc/guard/policy.yaml
COPY deploy/policy.yaml /etc/guard/policy.yaml

USER 10001:10001

EXPOSE 8080

# slim has no curl: python's urllib raises (exit 1) on a refused connection or a non-2xx answer.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/healthz', timeout=3)"]

# Arguments after the image name are appended (--insecure, --workers 2, --policy ...).
ENTRYPOINT ["guard", "serve", "--host", "0.0.0.0", "--port", "8080"]
