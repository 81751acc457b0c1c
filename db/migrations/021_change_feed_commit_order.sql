-- The change feed's cursor is drawn at commit (issue 30). Until now a writer took the feed's
-- advisory lock as it inserted its event and held it to its commit, so every transaction recording
-- a change waited for the previous one's last round trip with the client: on a busy worker, tens
-- of milliseconds each, and the 20 first pages of a crawl queued behind one another for ~0.1 s.
-- Now an event is inserted with a provisional seq and no lock; this deferred trigger runs inside the
-- commit, takes the lock there and gives the row its final seq. The lock is held from that point
-- to the end of the commit, within the server: seqs still become visible in order (a reader never
-- sees n+1 while n may still commit), and seqs follow commit order, not insert order. Provisional
-- seqs are never visible: they belong to rows not yet committed.
CREATE OR REPLACE FUNCTION change_events_sequence() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM pg_advisory_xact_lock(2900215); UPDATE change_events SET seq = nextval('change_events_seq_seq') WHERE seq = NEW.seq; RETURN NULL; END
$$;

DROP TRIGGER IF EXISTS change_events_sequence ON change_events;

CREATE CONSTRAINT TRIGGER change_events_sequence AFTER INSERT ON change_events
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION change_events_sequence();
