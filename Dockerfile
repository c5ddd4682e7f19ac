# One image for every function and for the file Jobs.
#   functions: node /app/functions/<name>.mjs      (one Knative Service each)
#   Job program: /usr/local/bin/felis files ...    (FELIS_FILES_COMMAND's default)
# Runs as a non-root user on a read-only root filesystem: nothing is written at run time.
# `npm run test:container` builds it as written with podman/buildah and runs it with runc (test/container/).

FROM node:24-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
# No install scripts: the build needs none. esbuild finds its platform binary without its own, the
# `node` package's binary is not used here (the base image's node is), and node-liblzma's native
# addon is never loaded (only its WebAssembly is): its prebuild needs a newer libstdc++ than
# bookworm's, and building it would need python, make and g++, which the slim image lacks.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json ./
COPY scripts ./scripts
COPY lib ./lib
COPY functions ./functions
COPY job ./job
# The API reference document, inlined into the bundles (served at /openapi.json and /docs).
COPY docs/openapi.json ./docs/
# Source maps stay out of the image: nothing there reads them.
RUN node scripts/build.ts && find dist -name '*.map' -delete

FROM node:24-slim
# NODE_COMPILE_CACHE: V8's compiled code for every bundle, made below, read at each start (a woken
# function compiles less before it serves). Node keys it by user id and file path, so it is made by
# the image's own user from the image's own paths; at run time it is only read.
ENV NODE_ENV=production \
    PORT=8080 \
    NODE_COMPILE_CACHE=/app/compile-cache \
    FELIS_WASM_DIR=/app/wasm
WORKDIR /app
# The bundles are self-contained: no node_modules in the image.
COPY --from=build /src/dist/functions/ /app/functions/
COPY --from=build --chmod=0755 /src/dist/felis.mjs /usr/local/bin/felis
# The archive codecs' WebAssembly modules (7-Zip, liblzma), read by the Job program only when an archive op needs one.
COPY --from=build /src/dist/wasm/ /app/wasm/
COPY --from=build --chown=1000:1000 /src/dist/image-compile-cache.mjs /tmp/image-compile-cache.mjs
RUN install -d -o 1000 -g 1000 /app/compile-cache
# The `node` user of the base image (uid 1000); numeric so runAsNonRoot can verify it.
USER 1000:1000
# Starts each function once (no cluster needed) and runs the Job program once, to fill the cache.
RUN node /tmp/image-compile-cache.mjs /app/functions /usr/local/bin/felis && rm /tmp/image-compile-cache.mjs
EXPOSE 8080
CMD ["node", "/app/functions/holder.mjs"]
