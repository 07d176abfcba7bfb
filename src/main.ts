#!/usr/bin/env bun
import { runCommandLine } from './cli/index.ts'

runCommandLine(process.argv.slice(2))
