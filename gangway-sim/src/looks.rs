//! The `ssh` host model: a team with no scheduler, where each user looks for free GPUs by hand
//! (`ssh`, `nvidia-smi`) and starts a job in `tmux` when enough are free.
//!
//! A user looks when they want to start a job (its submit time), and again at each later look
//! while it waits. Looks fall every [`LookSchedule::check_interval_ms`] during working hours
//! ([`LookSchedule::day_start_ms`] to [`LookSchedule::day_end_ms`] on the first
//! [`LookSchedule::work_days`] days of each week), on a grid that starts at the job's submit
//! time, plus one look each working day at [`LookSchedule::evening_ms`] (shifted by the same
//! phase, so that two users rarely look at the same instant). Virtual time 0 is a Monday at
//! 00:00.
//!
//! The simulator ([`crate::Simulator`] with [`crate::SimOptions::looks`]) plays the
//! host: at each look it submits the job to the real [`gangway::Scheduler`] and, if it does not
//! start in that tick, cancels it; no queue is kept, so there are no reservations and no
//! fairness, and whoever looks first wins.
//!
//! ```
//! use gangway_sim::LookSchedule;
//! let looks = LookSchedule::default();
//! let hour = 3_600_000;
//! // Monday 10:00 wants a job; the next look is 15 minutes later.
//! assert_eq!(looks.next_look(10 * hour, 10 * hour), 10 * hour + 900_000);
//! // Monday 18:50: the next look is the evening one, at 21:00 (plus the job's 5-minute phase).
//! let late = 18 * hour + 50 * 60_000;
//! assert_eq!(looks.next_look(late, late), 21 * hour + 5 * 60_000);
//! ```

/// One hour in ms.
const HOUR_MS: u64 = 3_600_000;
/// One day in ms.
pub const DAY_MS: u64 = 24 * HOUR_MS;
/// One week in ms.
pub const WEEK_MS: u64 = 7 * DAY_MS;

/// When the users of a team without a scheduler look for free GPUs, and how often a start
/// collides with someone who took the same GPUs by hand.
///
/// ```
/// use gangway_sim::LookSchedule;
/// let looks = LookSchedule::default();
/// assert_eq!(looks.check_interval_ms, 15 * 60_000);
/// assert_eq!((looks.day_start_ms, looks.day_end_ms), (9 * 3_600_000, 19 * 3_600_000));
/// assert_eq!(looks.evening_ms, Some(21 * 3_600_000));
/// assert_eq!((looks.work_days, looks.collision_permille), (5, 0));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LookSchedule {
    /// Time between two looks during working hours, in ms (> 0). Default 15 minutes.
    pub check_interval_ms: u64,
    /// Start of working hours, in ms after midnight. Default 09:00.
    pub day_start_ms: u64,
    /// End of working hours (exclusive), in ms after midnight. Default 19:00.
    pub day_end_ms: u64,
    /// The evening look of each working day, in ms after midnight; `None`: none. Default 21:00.
    pub evening_ms: Option<u64>,
    /// Working days per week, from Monday (1..=7). Default 5.
    pub work_days: u32,
    /// Chance, in thousandths, that a start collides with someone who grabbed the same GPUs by
    /// hand: the job does not start and is tried again at the next look (below 1000).
    /// Default 0.
    pub collision_permille: u32,
    /// Seed of the collision draws.
    pub seed: u64,
}

impl Default for LookSchedule {
    fn default() -> Self {
        LookSchedule {
            check_interval_ms: 15 * 60_000,
            day_start_ms: 9 * HOUR_MS,
            day_end_ms: 19 * HOUR_MS,
            evening_ms: Some(21 * HOUR_MS),
            work_days: 5,
            collision_permille: 0,
            seed: 1,
        }
    }
}

/// A look schedule is invalid; the message names the field.
///
/// ```
/// use gangway_sim::LookSchedule;
/// let bad = LookSchedule { check_interval_ms: 0, ..LookSchedule::default() };
/// assert!(bad.validate().unwrap_err().to_string().contains("check_interval_ms"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid look schedule: {0}")]
pub struct LookError(pub String);

impl LookSchedule {
    /// Checks the fields: a positive interval, working hours within one day and not empty,
    /// an evening look within the day, 1..=7 working days and a collision chance below 1000
    /// thousandths.
    pub fn validate(&self) -> Result<(), LookError> {
        let fail = |m: &str| Err(LookError(m.to_string()));
        if self.check_interval_ms == 0 {
            return fail("check_interval_ms must be positive");
        }
        if self.day_start_ms >= self.day_end_ms || self.day_end_ms > DAY_MS {
            return fail("day_start_ms must be before day_end_ms, within one day");
        }
        if self.evening_ms.is_some_and(|e| e >= DAY_MS) {
            return fail("evening_ms must be within one day");
        }
        if !(1..=7).contains(&self.work_days) {
            return fail("work_days must be 1 to 7");
        }
        if self.collision_permille >= 1000 {
            return fail(
                "collision_permille must be below 1000 (every start colliding never ends)",
            );
        }
        Ok(())
    }

    /// Whether day number `day` (0 = the first Monday) is a working day.
    fn is_work_day(&self, day: u64) -> bool {
        day % 7 < u64::from(self.work_days)
    }

    /// The first look strictly after `after_ms` of a job that first looked at `submit_ms`: the
    /// next point of the grid `submit_ms + k · check_interval_ms` within working hours, or the
    /// evening look (at `evening_ms` plus the grid's phase), whichever comes first.
    ///
    /// ```
    /// use gangway_sim::LookSchedule;
    /// let looks = LookSchedule::default();
    /// let hour = 3_600_000;
    /// // Friday 22:00 → Monday 09:00 (the job's grid has phase 0).
    /// let friday = 4 * 24 * hour + 22 * hour;
    /// assert_eq!(looks.next_look(friday, friday), 7 * 24 * hour + 9 * hour);
    /// ```
    pub fn next_look(&self, submit_ms: u64, after_ms: u64) -> u64 {
        let interval = self.check_interval_ms.max(1);
        let phase = submit_ms % interval;
        let mut day = after_ms / DAY_MS;
        loop {
            if self.is_work_day(day) {
                let midnight = day * DAY_MS;
                let mut best: Option<u64> = None;
                // The first grid point of the day's working hours after `after_ms`.
                let from = (midnight + self.day_start_ms).max(after_ms + 1);
                let grid = from + (phase + interval - from % interval) % interval;
                if grid < midnight + self.day_end_ms {
                    best = Some(grid);
                }
                if let Some(evening) = self.evening_ms {
                    let at = midnight + evening + phase;
                    if at > after_ms {
                        best = Some(best.map_or(at, |b| b.min(at)));
                    }
                }
                if let Some(at) = best {
                    return at;
                }
            }
            day += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: u64 = 60_000;

    #[test]
    fn looks_follow_the_grid_inside_working_hours() {
        let looks = LookSchedule::default();
        let submit = 9 * HOUR_MS + 7 * MIN;
        assert_eq!(looks.next_look(submit, submit), submit + 15 * MIN);
        assert_eq!(
            looks.next_look(submit, submit + 15 * MIN),
            submit + 30 * MIN
        );
    }

    #[test]
    fn a_job_wanted_at_night_waits_for_the_morning_on_its_grid() {
        let looks = LookSchedule::default();
        // Tuesday 02:03: the next look is Tuesday 09:03 (phase 3 minutes).
        let submit = DAY_MS + 2 * HOUR_MS + 3 * MIN;
        assert_eq!(
            looks.next_look(submit, submit),
            DAY_MS + 9 * HOUR_MS + 3 * MIN
        );
    }

    #[test]
    fn weekends_have_no_looks_and_the_evening_look_can_be_switched_off() {
        let looks = LookSchedule {
            evening_ms: None,
            ..LookSchedule::default()
        };
        let friday_evening = 4 * DAY_MS + 19 * HOUR_MS;
        assert_eq!(looks.next_look(0, friday_evening), WEEK_MS + 9 * HOUR_MS);
        let every_day = LookSchedule {
            work_days: 7,
            ..looks
        };
        assert_eq!(
            every_day.next_look(0, friday_evening),
            5 * DAY_MS + 9 * HOUR_MS
        );
    }

    #[test]
    fn invalid_schedules_name_their_field() {
        let bad = |looks: LookSchedule| looks.validate().unwrap_err().0;
        let base = LookSchedule::default;
        assert!(
            bad(LookSchedule {
                work_days: 0,
                ..base()
            })
            .contains("work_days")
        );
        assert!(
            bad(LookSchedule {
                day_end_ms: 0,
                ..base()
            })
            .contains("day_start_ms")
        );
        assert!(
            bad(LookSchedule {
                collision_permille: 1001,
                ..base()
            })
            .contains("collision_permille")
        );
        assert!(
            bad(LookSchedule {
                evening_ms: Some(DAY_MS),
                ..base()
            })
            .contains("evening_ms")
        );
        assert!(base().validate().is_ok());
    }
}
