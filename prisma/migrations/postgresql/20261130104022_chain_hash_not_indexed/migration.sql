-- DropIndex
DROP INDEX "chain_records_hash_key";
