// The one fixed JSON object the baseline servers answer with (bare.ts, fastify.ts).
export const FIXED_ZOO = {
  id: '0190c7d2-9a4e-7c4b-8f3e-1a2b3c4d5e6f',
  name: 'Bare Zoo',
  city: 'Lisbon',
  founded: 1884,
  created_at: '2024-07-01T12:00:00.000Z',
  updated_at: '2024-07-01T12:00:00.000Z',
};
