# syntax=docker/dockerfile:1
# Headroom controller image: build with the full Node 24 toolchain, run on distroless.
#
#   docker build -t headroom:dev .
#   docker run --rm --read-only --tmpfs /tmp headroom:dev --help
#
# Pin the bases by digest in release builds: --build-arg BUILD_IMAGE=node:24-bookworm@sha256:...

ARG BUILD_IMAGE=node:24-bookworm
ARG RUNTIME_IMAGE=gcr.io/distroless/nodejs24-debian12:nonroot

FROM ${BUILD_IMAGE} AS build
WORKDIR /app
# Manifests first, so the dependency layer is cached across source-only changes.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
# The rest of the context: .dockerignore lets through only sources and build config.
COPY . .
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund

# distroless: no shell, no package manager; the :nonroot tag's user is 65532.
FROM ${RUNTIME_IMAGE}
LABEL org.opencontainers.image.title="headroom" \
      org.opencontainers.image.description="Predictive node autoscaler for Cluster API clusters" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/headroom-dev/headroom"
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build --chown=0:0 /app/package.json ./package.json
COPY --from=build --chown=0:0 /app/node_modules ./node_modules
COPY --from=build --chown=0:0 /app/dist ./dist
COPY --from=build --chown=0:0 /app/bin ./bin
# util-linux chrt (needs only glibc, which distroless has): solver threads put
# themselves under SCHED_IDLE with it, so solves never delay the webhook (ADR 0034).
COPY --from=build --chown=0:0 /usr/bin/chrt /usr/bin/chrt
# Numeric, so kubelet can verify runAsNonRoot without reading /etc/passwd. Files stay
# root-owned and read-only for this user; the only writable path is a mounted /tmp.
USER 65532:65532
EXPOSE 8443 8080
ENTRYPOINT ["/nodejs/bin/node", "bin/headroom.js"]
CMD ["controller"]
