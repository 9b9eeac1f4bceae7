/**
 * The services a handler may use. Areas add their service here as they are
 * built; tests and the command line's local vault mode assemble their own.
 */
import type { Config } from './config.js';
import type { SidecarStore } from '../store/sidecar.js';
import type { Vaults } from '../vault/vaults.js';
import type { ChangeLogs } from '../changes/change-log.js';
import type { JobRunner } from '../jobs/runner.js';
import type { ReminderScheduler } from '../reminders/scheduler.js';

export interface Services {
  config: Config;
  store: SidecarStore;
  /** The users' Homes and their indexes. */
  vaults: Vaults;
  /** Each user's change journal (changes_delta, change and note streams). Absent: those answer 503. */
  changes?: ChangeLogs;
  /** Background jobs (tag rewrites). Absent: jobs actions answer 503. */
  jobs?: JobRunner;
  /** Fires block reminders into the inbox; its `now()` is the clock reminders use. Absent: nothing fires. */
  reminders?: ReminderScheduler;
}
