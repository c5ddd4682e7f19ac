/**
 * The embedded cluster's state on disk, for `npm start`: `<dataDir>/cluster.sqlite` through
 * `node:sqlite`. Three tables: `objects` (resource, namespace, name → the object as JSON), `meta`
 * (the global resourceVersion counter) and `node_processes` (the kubelet's journal of the Pod
 * processes it started).
 *
 * Why these settings: WAL with `synchronous=FULL` makes every commit durable before the call
 * returns, and a crash at any point leaves the last committed state (SQLite rolls back a torn
 * transaction on the next open). `locking_mode=EXCLUSIVE` plus a write at open keeps the database
 * locked for as long as this process has it open, so a second `npm start` on the same FELIS_DATA
 * is refused instead of two clusters writing one world; the OS drops the lock when a process dies,
 * so a crash never leaves a stale lock behind.
 *
 * @module
 */

import { join } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { ProcessJournal, ProcessRecord } from './kubelet/journal.ts';
import { privateDataDir, privateFile, privateSidecars } from './private-files.ts';
import type { KObject, StoreBackend } from './store.ts';

const SCHEMA_VERSION = '1';

/** Another process has this data directory open. */
export class DataDirInUseError extends Error {
  readonly code = 'DATA_DIR_IN_USE';
  constructor(file: string) {
    super(`${file} is in use by another embedded cluster (is another npm start running on this FELIS_DATA?)`);
  }
}

/** The file is not a database this build can read (corrupt, another format, a newer schema). */
export class ClusterStateUnreadableError extends Error {
  readonly code = 'CLUSTER_STATE_UNREADABLE';
  constructor(file: string, why: string) {
    super(`${file} cannot be read as the embedded cluster's state (${why}); stop the service and move it away (rm ${file}*) to start afresh`);
  }
}

function isBusy(err: unknown): boolean {
  const e = err as { errcode?: number; message?: string };
  // SQLITE_BUSY (5) and SQLITE_LOCKED (6), also as extended codes.
  return (e.errcode !== undefined && [5, 6].includes(e.errcode & 0xff)) || /database is locked/.test(e.message ?? '');
}

export class PersistentState implements StoreBackend, ProcessJournal {
  readonly file: string;
  private readonly db: DatabaseSync;
  private depth = 0;
  private readonly stmts: {
    put: StatementSync;
    remove: StatementSync;
    setRv: StatementSync;
    record: StatementSync;
    forget: StatementSync;
  };

  private constructor(file: string, db: DatabaseSync) {
    this.file = file;
    this.db = db;
    this.stmts = {
      put: db.prepare('INSERT INTO objects(resource, namespace, name, json) VALUES (?, ?, ?, ?) ON CONFLICT(resource, namespace, name) DO UPDATE SET json = excluded.json'),
      remove: db.prepare('DELETE FROM objects WHERE resource = ? AND namespace = ? AND name = ?'),
      setRv: db.prepare("INSERT INTO meta(key, value) VALUES ('resourceVersion', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value"),
      record: db.prepare(
        'INSERT INTO node_processes(pod_uid, container, namespace, pod, pid, start_ticks) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(pod_uid, container) DO UPDATE SET namespace = excluded.namespace, pod = excluded.pod, pid = excluded.pid, start_ticks = excluded.start_ticks',
      ),
      forget: db.prepare('DELETE FROM node_processes WHERE pod_uid = ?'),
    };
  }

  /**
   * Opens (or creates) `<dataDir>/cluster.sqlite` and takes it for this process. The directory is
   * 0700 and the database 0600 (created so before SQLite opens it, so its WAL and shared-memory
   * files, which SQLite creates with the database's mode, are 0600 too), also when they existed.
   */
  static open(dataDir: string): PersistentState {
    privateDataDir(dataDir);
    const file = join(dataDir, 'cluster.sqlite');
    privateFile(file, { create: true });
    let db: DatabaseSync | undefined;
    try {
      db = new DatabaseSync(file, { timeout: 0 });
      db.exec('PRAGMA locking_mode = EXCLUSIVE');
      db.exec('PRAGMA journal_mode = WAL');
      db.exec('PRAGMA synchronous = FULL');
      // The first write takes the exclusive lock, which is then kept until close.
      db.exec('BEGIN IMMEDIATE');
      db.exec(`
        CREATE TABLE IF NOT EXISTS objects (
          resource TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL, json TEXT NOT NULL,
          PRIMARY KEY (resource, namespace, name)
        ) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS node_processes (
          pod_uid TEXT NOT NULL, container TEXT NOT NULL, namespace TEXT NOT NULL, pod TEXT NOT NULL,
          pid INTEGER NOT NULL, start_ticks TEXT NOT NULL,
          PRIMARY KEY (pod_uid, container)
        ) WITHOUT ROWID;
      `);
      const schema = db.prepare("SELECT value FROM meta WHERE key = 'schema'").get() as { value: string } | undefined;
      if (schema && schema.value !== SCHEMA_VERSION) {
        db.exec('ROLLBACK');
        throw new ClusterStateUnreadableError(file, `schema ${schema.value}, this build reads ${SCHEMA_VERSION}`);
      }
      db.prepare("INSERT INTO meta(key, value) VALUES ('schema', ?) ON CONFLICT(key) DO NOTHING").run(SCHEMA_VERSION);
      db.exec('COMMIT');
      // The WAL exists now; a umask or an older run cannot have left it readable. (By path: the
      // database's locks are this process's, and closing a descriptor of it would drop them.)
      privateSidecars(file);
    } catch (err) {
      try {
        db?.close();
      } catch {
        // closing a half-opened database is best effort
      }
      if (isBusy(err)) throw new DataDirInUseError(file);
      if (err instanceof ClusterStateUnreadableError) throw err;
      // SQLITE_CORRUPT (11) and SQLITE_NOTADB (26): not something a restart can fix.
      const code = (err as { errcode?: number }).errcode;
      if (code !== undefined && [11, 26].includes(code & 0xff)) throw new ClusterStateUnreadableError(file, (err as Error).message);
      throw err;
    }
    return new PersistentState(file, db);
  }

  load(): { resourceVersion: number; objects: { resource: string; object: KObject }[] } | undefined {
    const rv = this.db.prepare("SELECT value FROM meta WHERE key = 'resourceVersion'").get() as { value: string } | undefined;
    if (!rv) return undefined;
    const rows = this.db.prepare('SELECT resource, json FROM objects ORDER BY resource, namespace, name').all() as {
      resource: string;
      json: string;
    }[];
    return { resourceVersion: Number(rv.value), objects: rows.map((r) => ({ resource: r.resource, object: JSON.parse(r.json) as KObject })) };
  }

  atomically<T>(fn: () => T): T {
    if (this.depth > 0) {
      this.depth++;
      try {
        return fn();
      } finally {
        this.depth--;
      }
    }
    this.db.exec('BEGIN IMMEDIATE');
    this.depth = 1;
    try {
      return fn();
    } finally {
      this.depth = 0;
      // Committed even when fn threw: the writes it made are already visible in memory.
      this.db.exec('COMMIT');
    }
  }

  put(resource: string, obj: KObject, resourceVersion: number): void {
    this.atomically(() => {
      this.stmts.put.run(resource, obj.metadata.namespace ?? '', obj.metadata.name ?? '', JSON.stringify(obj));
      this.stmts.setRv.run(String(resourceVersion));
    });
  }

  remove(resource: string, ns: string, name: string, resourceVersion: number): void {
    this.atomically(() => {
      this.stmts.remove.run(resource, ns, name);
      this.stmts.setRv.run(String(resourceVersion));
    });
  }

  record(r: ProcessRecord): void {
    this.atomically(() => this.stmts.record.run(r.podUid, r.container, r.namespace, r.pod, r.pid, r.startTicks));
  }

  forget(podUid: string): void {
    this.atomically(() => this.stmts.forget.run(podUid));
  }

  list(): ProcessRecord[] {
    const rows = this.db.prepare('SELECT pod_uid, container, namespace, pod, pid, start_ticks FROM node_processes').all() as {
      pod_uid: string;
      container: string;
      namespace: string;
      pod: string;
      pid: number;
      start_ticks: string;
    }[];
    return rows.map((r) => ({ podUid: r.pod_uid, container: r.container, namespace: r.namespace, pod: r.pod, pid: Number(r.pid), startTicks: r.start_ticks }));
  }

  clear(): void {
    this.atomically(() => this.db.exec('DELETE FROM node_processes'));
  }

  close(): void {
    if (this.db.isOpen) this.db.close();
  }
}
