/**
 * The embedded API server's TLS: a cluster CA and a server certificate for `127.0.0.1`, `::1` and
 * `localhost` signed by it. kubectl (client-go) sends a bearer token only over TLS, so the API is
 * served over HTTPS, and every kubeconfig the cluster hands out carries the CA
 * (`certificate-authority-data`) instead of skipping verification.
 *
 * - With a data directory that persists (`npm start`), the CA is kept in `<dataDir>/ca.crt` and
 *   `<dataDir>/ca.key` (both 0600, made by `privateFile` like the other private files) and reused
 *   on every start, so a kubeconfig written before a restart still trusts the server after it. The
 *   server certificate is issued anew at each start (it lives in memory only).
 * - Ephemeral clusters (the tests) get a CA of their own in memory; one per process is enough, so
 *   it is made once and shared.
 *
 * Why `@peculiar/x509` (a devDependency; cluster/ is development and test infrastructure): it is a
 * maintained, pure-JavaScript X.509 builder over WebCrypto, so certificates are made in-process in
 * about a millisecond with Node's own crypto, with no `openssl` binary to find on the machine and
 * no process to spawn for every test cluster; `selfsigned` rests on node-forge (RSA only, slow key
 * generation). The keys are ECDSA P-256, which client-go, client-node and curl all accept.
 *
 * @module
 */
import { webcrypto } from 'node:crypto';
import fs from 'node:fs';
import { join } from 'node:path';
// @peculiar/x509's dependency injection (tsyringe) needs the Reflect metadata polyfill loaded first.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { privateFile } from './private-files.ts';

// The DOM's WebCrypto types are not in this project's lib; Node's webcrypto is that API.
type Any = any;
type CryptoKeyPair = { privateKey: Any; publicKey: Any };
x509.cryptoProvider.set(webcrypto as Any);

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY = 86_400_000;

export interface ClusterTls {
  /** The CA certificate (PEM): what clients trust. */
  caPem: string;
  /** The server certificate (PEM) and its PKCS#8 private key (PEM), for `https.createServer`. */
  certPem: string;
  keyPem: string;
}

interface Ca {
  cert: x509.X509Certificate;
  keys: CryptoKeyPair;
}

function serial(): string {
  // Positive, 16 bytes: the first byte's top bit cleared.
  const b = webcrypto.getRandomValues(new Uint8Array(16));
  b[0]! &= 0x7f;
  b[0]! |= 0x01;
  return Buffer.from(b).toString('hex');
}

async function pkcs8Pem(key: Any): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', key);
  return x509.PemConverter.encode(der, 'PRIVATE KEY');
}

async function newCa(): Promise<Ca> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: 'CN=felis-embedded-ca',
    notBefore: new Date(now - DAY),
    notAfter: new Date(now + 3650 * DAY),
    signingAlgorithm: ALG,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { cert, keys };
}

async function loadCa(certFile: string, keyFile: string): Promise<Ca> {
  const cert = new x509.X509Certificate(fs.readFileSync(certFile, 'utf8'));
  const der = x509.PemConverter.decodeFirst(fs.readFileSync(keyFile, 'utf8'));
  const privateKey = await webcrypto.subtle.importKey('pkcs8', der, ALG, true, ['sign']);
  const publicKey = await cert.publicKey.export(ALG, ['verify'], webcrypto as Any);
  return { cert, keys: { privateKey, publicKey } as CryptoKeyPair };
}

/** Writes `text` to `file` created 0600 (no link followed), then checks its mode like the other private files. */
function writePrivate(file: string, text: string): void {
  const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_NOFOLLOW, 0o600);
  try {
    fs.writeSync(fd, text);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  privateFile(file);
}

/**
 * The CA kept in `dir` (`ca.crt`, `ca.key`): read when both exist, else made and written (0600).
 * A CA that expires within a day is replaced.
 */
async function persistentCa(dir: string): Promise<Ca> {
  const certFile = join(dir, 'ca.crt');
  const keyFile = join(dir, 'ca.key');
  privateFile(certFile);
  privateFile(keyFile);
  if (fs.existsSync(certFile) && fs.existsSync(keyFile)) {
    const ca = await loadCa(certFile, keyFile);
    if (ca.cert.notAfter.getTime() > Date.now() + DAY) return ca;
  }
  const ca = await newCa();
  writePrivate(keyFile, await pkcs8Pem(ca.keys.privateKey));
  writePrivate(certFile, ca.cert.toString('pem'));
  return ca;
}

let processTls: Promise<ClusterTls> | undefined;

/**
 * The TLS material for one start of the API server: the CA kept in `persistDir` and a fresh server
 * certificate for the loopback names; without `persistDir`, this process's in-memory CA and
 * certificate (made once: the names are the same for every ephemeral cluster).
 */
export function clusterTls(persistDir?: string): Promise<ClusterTls> {
  if (persistDir) return persistentCa(persistDir).then(serverTls);
  processTls ??= newCa().then(serverTls);
  return processTls;
}

async function serverTls(ca: Ca): Promise<ClusterTls> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: 'CN=felis-embedded-apiserver',
    issuer: ca.cert.subject,
    notBefore: new Date(now - DAY),
    notAfter: new Date(now + 365 * DAY),
    signingAlgorithm: ALG,
    publicKey: keys.publicKey,
    signingKey: ca.keys.privateKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([
        { type: 'ip', value: '127.0.0.1' },
        { type: 'ip', value: '::1' },
        { type: 'dns', value: 'localhost' },
      ]),
      await x509.AuthorityKeyIdentifierExtension.create(ca.cert),
    ],
  });
  return { caPem: ca.cert.toString('pem'), certPem: cert.toString('pem'), keyPem: await pkcs8Pem(keys.privateKey) };
}
