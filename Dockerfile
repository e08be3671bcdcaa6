# A small image: a static (musl) retrysafe on distroless. Build: docker build -t retrysafe .
# Run on a checkout: docker run --rm -v "$PWD:/src" retrysafe check .
FROM rust:1-alpine AS build
RUN apk add --no-cache musl-dev build-base
WORKDIR /build
COPY . .
ARG RETRYSAFE_COMMIT=unknown
ENV RETRYSAFE_COMMIT=${RETRYSAFE_COMMIT}
RUN cargo build --locked --profile dist && cp target/dist/retrysafe /retrysafe && /retrysafe --version

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /retrysafe /usr/local/bin/retrysafe
WORKDIR /src
ENTRYPOINT ["/usr/local/bin/retrysafe"]
CMD ["check", "."]
