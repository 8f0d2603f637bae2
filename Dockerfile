# coachd: one static binary (pure-Go SQLite, CGO off) on a distroless base,
# running as an unprivileged user.
#   docker build --build-arg REVISION=$(git rev-parse HEAD) -t coachd .
# (.git stays out of the build context: REVISION is what `coachd version`
# names, as a build from a clone names its commit.)
#   docker run -p 8080:8080 -v coachd-data:/data coachd --demo
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG REVISION=""
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X main.revision=${REVISION}" -o /out/coachd ./cmd/coachd \
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
