# One image for every function and for the file Jobs.
#   functions: node /app/functions/<name>.mjs      (one Knative Service each)
#   Job program: /usr/local/bin/felis files ...    (FELIS_FILES_COMMAND's default)
# Runs as a non-root user on a read-only root filesystem: nothing is written at run time.

FROM node:24-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts ./scripts
COPY lib ./lib
COPY functions ./functions
COPY job ./job
# Source maps stay out of the image: nothing there reads them.
RUN node scripts/build.ts && find dist -name '*.map' -delete

FROM node:24-slim
ENV NODE_ENV=production \
    PORT=8080
WORKDIR /app
# The bundles are self-contained: no node_modules in the image.
COPY --from=build /src/dist/functions/ /app/functions/
COPY --from=build --chmod=0755 /src/dist/felis.mjs /usr/local/bin/felis
# The `node` user of the base image (uid 1000); numeric so runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 8080
CMD ["node", "/app/functions/holder.mjs"]
