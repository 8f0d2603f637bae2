# coachd: one static binary (pure-Go SQLite, CGO off) on a distroless base,
# running as an unprivileged user.
#   docker build -t coachd .
#   docker run -p 8080:8080 -v coachd-data:/data coachd --demo
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/coachd ./cmd/coachd \
 && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/coachd /coachd
COPY --from=build --chown=nonroot:nonroot /out/data /data
COPY --from=build /src/examples /examples
USER nonroot:nonroot
ENV COACHD_ADDR=0.0.0.0:8080 COACHD_DB=/data/coachd.db
VOLUME /data
EXPOSE 8080
HEALTHCHECK NONE
ENTRYPOINT ["/coachd", "serve"]
