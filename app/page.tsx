import { SearchForm } from "@/components/search-form";

export default function Home() {
  return (
    <div className="home">
      <h1>Look up a decentralised identity</h1>
      <p className="lede">
        People and organisations publish who they are on their own domains. This resolver fetches what they publish and checks every claim
        from both sides.
      </p>
      <SearchForm />
    </div>
  );
}
