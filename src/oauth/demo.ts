import type { AppContext } from '../context.js';

/** On an empty demo deployment: creates the demo user and client and returns the lines that show how to use them. */
export async function ensureDemoDeployment(_ctx: AppContext): Promise<string[]> {
  return [];
}
