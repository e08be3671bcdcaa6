import express from 'express';
import { z } from 'zod';
import { PrismaClient } from '@prisma/client';
import { idempotency } from './middleware/idempotency';

const prisma = new PrismaClient();
const app = express();
app.use(express.json());

const createOrderSchema = z.object({
  sku: z.string().min(2),
  quantity: z.number().int().positive(),
  email: z.string().email(),
  note: z.string().optional(),
});

app.post('/api/orders', idempotency, async (req, res) => {
  const input = createOrderSchema.parse(req.body);
  const order = await prisma.order.create({ data: input });
  res.status(201).json(order);
});

const createUserSchema = z.object({
  email: z.string().email(),
  name: z.string(),
});

app.post('/api/users', async (req, res) => {
  const input = createUserSchema.parse(req.body);
  const user = await prisma.user.create({ data: { email: input.email, name: input.name } });
  res.status(201).json(user);
});

export default app;
