#!/usr/bin/env node
// The entry point of `gatehouse`. Before anything else is loaded, V8's young generation is capped
// (loading the program's modules alone grows it to node's default of 16 MiB semi-spaces); the
// command line comes after, in program.ts.
import { capYoungGeneration } from '../platform/memory/young-generation.js';

/** V8's young generation per semi-space, at most (node's default: 16 MiB; docs/deployment.md#memory). */
const SEMI_SPACE_MIB = 8;

capYoungGeneration(SEMI_SPACE_MIB);
const { runCommandLine } = await import('./program.js');
runCommandLine();
