import { createHash } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { claimKey, completeKey, findKey, releaseKey } from '../idempotency/store';

const KEY_PATTERN = /^[A-Za-z0-9_-]{16,64}$/;

function requestFingerprint(req: Request): string {
  return createHash('sha256')
    .update(JSON.stringify({ method: req.method, path: req.originalUrl, body: req.body }))
    .digest('hex');
}

/**
 * Idempotency-Key handling for money-moving routes: the key is required, claimed atomically per
 * user before the handler runs, and the first response is replayed to every retry.
 */
export async function idempotency(req: Request, res: Response, next: NextFunction) {
  const key = req.get('Idempotency-Key');
  if (!key) {
    return res.status(400).json({ error: 'Idempotency-Key header is required' });
  }
  if (key.length > 64 || !KEY_PATTERN.test(key)) {
    return res.status(400).json({ error: 'Idempotency-Key must be 16 to 64 URL-safe characters' });
  }
  const userId = req.get("X-Tenant") ?? "public";
  const requestHash = requestFingerprint(req);

  const claimed = await claimKey(userId, key, requestHash);
  if (!claimed) {
    const existing = await findKey(userId, key);
    if (!existing) {
      res.set('Retry-After', '1');
      return res.status(409).json({ error: 'Idempotency-Key is being released, retry' });
    }
    if (existing.request_hash !== requestHash) {
      return res.status(422).json({ error: 'Idempotency-Key was used with a different request' });
    }
    if (existing.state === 'in_progress') {
      res.set('Retry-After', '1');
      return res.status(409).json({ error: 'A request with this Idempotency-Key is in progress' });
    }
    return res.status(existing.response_status ?? 200).json(existing.response_body);
  }

  const send = res.json.bind(res);
  res.json = (body: unknown) => {
    if (res.statusCode >= 500) {
      void releaseKey(userId, key);
    } else {
      void completeKey(userId, key, res.statusCode, body);
    }
    return send(body);
  };
  next();
}
