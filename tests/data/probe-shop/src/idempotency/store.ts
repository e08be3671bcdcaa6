import { pool } from '../db';

export interface StoredKey {
  request_hash: string;
  state: 'in_progress' | 'completed';
  response_status: number | null;
  response_body: unknown;
}

/** Claims the key for this caller in one statement; false when it was already claimed. */
export async function claimKey(userId: string, key: string, requestHash: string): Promise<boolean> {
  const result = await pool.query(
    `INSERT INTO idempotency_keys (user_id, key, request_hash, state, expires_at)
     VALUES ($1, $2, $3, 'in_progress', now() + interval '24 hours')
     ON CONFLICT (user_id, key) DO NOTHING`,
    [userId, key, requestHash],
  );
  return result.rowCount === 1;
}

export async function findKey(userId: string, key: string): Promise<StoredKey | undefined> {
  const { rows } = await pool.query<StoredKey>(
    `SELECT request_hash, state, response_status, response_body
       FROM idempotency_keys
      WHERE user_id = $1 AND key = $2 AND expires_at > now()`,
    [userId, key],
  );
  return rows[0];
}

export async function completeKey(userId: string, key: string, status: number, body: unknown) {
  await pool.query(
    `UPDATE idempotency_keys
        SET state = 'completed', response_status = $3, response_body = $4
      WHERE user_id = $1 AND key = $2`,
    [userId, key, status, JSON.stringify(body)],
  );
}

/** Gives the key back so that a retry can run the request again. */
export async function releaseKey(userId: string, key: string) {
  await pool.query('DELETE FROM idempotency_keys WHERE user_id = $1 AND key = $2', [userId, key]);
}
