-- PostgreSQL's 0016 makes the writers of the change logs take their sequence numbers in commit
-- order. SQLite needs nothing: one writer at a time holds the database to its commit.
SELECT 1;
