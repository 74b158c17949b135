# walletd: one image for every role. The command picks the role:
#   walletd up | ingress | worker --queues ... | migrate | bootstrap | auth-proxy | health
# Build: docker build -t walletd .   (see docs/DEPLOYING.md)

FROM python:3.11-slim-bookworm AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY infra ./infra
COPY ingress ./ingress
COPY workers ./workers
COPY consensus ./consensus
COPY notifier ./notifier
COPY authproxy ./authproxy
COPY walletd ./walletd
RUN python -m venv /opt/walletd \
    && /opt/walletd/bin/pip install --no-cache-dir ".[seal]"

FROM python:3.11-slim-bookworm
RUN groupadd --system --gid 10001 walletd \
    && useradd --system --uid 10001 --gid walletd --home-dir /var/lib/walletd --create-home \
       --shell /usr/sbin/nologin walletd
COPY --from=build /opt/walletd /opt/walletd
ENV PATH=/opt/walletd/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    WALLETD_DATA_DIR=/var/lib/walletd \
    WALLETD_HOST=0.0.0.0 \
    WALLETD_PORT=8080 \
    WALLETD_METRICS_PORT=9191 \
    WALLETD_LOG_FORMAT=json
WORKDIR /var/lib/walletd
USER 10001:10001
EXPOSE 8080 9191
STOPSIGNAL SIGTERM
# The ingress/up check; worker roles override it with `walletd health --role worker`.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
    CMD ["walletd", "health"]
ENTRYPOINT ["walletd"]
CMD ["up"]
