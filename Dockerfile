# syntax=docker/dockerfile:1
#
# jitoutbox-relay and outboxctl in one image: static binaries (CGO off; the
# SQLite driver is pure Go) on distroless static, run as a non-root user.
#
#   docker build -t jitoutbox .
#   docker run --rm jitoutbox -h                                   # the relay
#   docker run --rm --entrypoint /usr/local/bin/outboxctl jitoutbox status
#
# deploy/build-image.sh builds it and runs both binaries in it.

ARG GO_VERSION=1.26

FROM golang:${GO_VERSION} AS build
WORKDIR /src
# Modules first: this layer is reused while only the code changes.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ENV CGO_ENABLED=0
RUN go build -trimpath -ldflags='-s -w' -o /out/jitoutbox-relay ./cmd/jitoutbox-relay \
 && go build -trimpath -ldflags='-s -w' -o /out/outboxctl ./cmd/outboxctl

# distroless/static: CA certificates, tzdata and /etc/passwd, no shell, no
# package manager. The :nonroot tag runs as uid 65532.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/jitoutbox-relay /out/outboxctl /usr/local/bin/
USER 65532:65532
# -metrics-addr serves /metrics, /healthz and /readyz here (deploy/kubernetes).
ENV JITOUTBOX_METRICS_ADDR=:9090
EXPOSE 9090
ENTRYPOINT ["/usr/local/bin/jitoutbox-relay"]
